"""The gRPC edge: the servicers, interceptors, reflection and the gRPC server.

It calls the core through ``boaf.service.rpc``, as the HTTP edge does; the core never
imports it.
"""
