"""What the graph's nodes share, below them: the pipeline configuration (tiers, policies, question
validation), the graph state's types and the run context (loaded resources). Nothing here imports
a node or the builder, so nodes and graph import from here without a circle."""
