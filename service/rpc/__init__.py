"""The protocol-neutral RPC layer: protobuf messages in, protobuf messages out.

``converters`` is the only module that touches both protobuf and domain types. Both edges
call this layer; it knows nothing of transports.
"""
