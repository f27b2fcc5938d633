"""The protocol-free core of the service.

Settings, limits and admission, the data plane that turns validated domain requests into
answers, the error tree and its code table, the kernels' warm-up, the memory arithmetic,
metrics, logs, tracing and the model watcher. Nothing here imports gRPC, HTTP or an edge:
the edges (``boaf.service.grpc``, ``boaf.service.http``) call into the core, never back.
"""
