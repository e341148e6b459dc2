"""What a run is put together from: the tool registry, the services, model helpers.

This layer sits between the nodes and the features: it gathers the features' tools and
looks up the model, the event bus and the stores a run uses. Features never import it.
"""
