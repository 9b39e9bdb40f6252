"""Checks the service tests make over gRPC: the health service says SERVING, and a list of bad
requests each gets INVALID_ARGUMENT with details matching its pattern while the server keeps
answering."""

from __future__ import annotations

import re

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shader_svc import service


def healthy(ch: grpc.Channel) -> bool:
    r = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(service=service.SERVICE), timeout=5)
    return r.status == health_pb2.HealthCheckResponse.SERVING


def assert_invalid_and_serving(stub, ch: grpc.Channel, cases: list, timeout: float = 30) -> None:
    """Each (request, pattern) of ``cases``: Translate fails with INVALID_ARGUMENT, the details
    match ``pattern`` (re.search), and the health check still answers SERVING afterwards."""
    for req, pattern in cases:
        with pytest.raises(grpc.RpcError) as ei:
            stub.Translate(req, timeout=timeout)
        assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (pattern, ei.value.details())
        assert re.search(pattern, ei.value.details()), (pattern, ei.value.details())
        assert healthy(ch)
