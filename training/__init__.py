"""Training the tier router: oracle labelling (:mod:`training.labelling`), fitting the network
(:mod:`training.fitting`), cross-validated routing simulation (:mod:`training.simulate`), the
training command (:mod:`training.train`) and its report (:mod:`training.report`). The top layer:
it runs the evaluation code; the app loads only the trained weights through :mod:`router`."""
