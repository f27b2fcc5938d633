"""The protocol-neutral RPC layer: protobuf messages in, protobuf messages out.

``handlers`` holds every RPC of the Boaf and Game services, each taking its request and
the call's ``Call`` (``call``: deadline, liveness, the one cancel flag, peer) and making
one call into the data plane. ``converters`` is the only module that builds or reads
protobuf and domain values into each other. Both edges call this layer; it knows
nothing of transports.
"""
