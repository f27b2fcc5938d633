"""Server reflection in both versions clients ask for: ``grpc.reflection.v1`` and ``grpc.reflection.v1alpha``.

grpcio-reflection ships only v1alpha. The v1 service is the same protocol under
another package (same messages, same field numbers), so v1 is served by the
same servicer: its file descriptor is v1alpha's with the package renamed, added
to the default pool so that reflection can describe itself in both versions.
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

V1ALPHA = "grpc.reflection.v1alpha"
V1 = "grpc.reflection.v1"
V1_SERVICE_NAME = f"{V1}.ServerReflection"
SERVICE_NAMES = (reflection.SERVICE_NAME, V1_SERVICE_NAME)


def enable_server_reflection(service_names: Iterable[str], server: grpc.Server) -> None:
    """Serve reflection v1 and v1alpha on ``server``, listing ``service_names`` and both reflection services."""
    _add_v1_descriptor()
    servicer = reflection.ReflectionServicer((*service_names, *SERVICE_NAMES))
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    v1 = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(V1_SERVICE_NAME, {"ServerReflectionInfo": v1}),)
    )


def _add_v1_descriptor() -> None:
    pool = descriptor_pool.Default()
    name = reflection_pb2.DESCRIPTOR.name.replace("v1alpha", "v1")
    try:
        pool.FindFileByName(name)
        return  # added by an earlier server in this process
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    proto.name, proto.package = name, V1
    proto.ClearField("options")
    for message in proto.message_type:
        _rename_types(message)
    for service in proto.service:
        for method in service.method:
            method.input_type = _renamed(method.input_type)
            method.output_type = _renamed(method.output_type)
    pool.Add(proto)


def _rename_types(message: descriptor_pb2.DescriptorProto) -> None:
    for field in message.field:
        if field.type_name:
            field.type_name = _renamed(field.type_name)
    for nested in message.nested_type:
        _rename_types(nested)


def _renamed(type_name: str) -> str:
    return type_name.replace(f".{V1ALPHA}.", f".{V1}.")
