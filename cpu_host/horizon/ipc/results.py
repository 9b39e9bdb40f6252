"""Result codes the kernel and the IPC layers answer with: ``module | description << 9``.

Values from Atmosphère's public result definitions (libvapours ``results/svc_results.hpp``
module 1, ``sf_results.hpp`` module 10 (cmif), ``hipc_results.hpp`` module 11, ``sm_results.hpp``
module 21), matching switchbrew's Error_codes page."""

from __future__ import annotations


def result(module: int, description: int) -> int:
    return (module & 0x1FF) | (description & 0x1FFF) << 9


# kernel (module 1)
INVALID_SIZE = result(1, 101)  # 0xCA01
INVALID_ADDRESS = result(1, 102)  # 0xCC01
OUT_OF_HANDLES = result(1, 105)  # 0xD201
INVALID_CURRENT_MEMORY = result(1, 106)  # 0xD401
INVALID_HANDLE = result(1, 114)  # 0xE401
INVALID_POINTER = result(1, 115)  # 0xE601
INVALID_COMBINATION = result(1, 116)  # 0xE801
OUT_OF_RANGE = result(1, 119)  # 0xEE01
NOT_FOUND = result(1, 121)  # 0xF201
SESSION_CLOSED = result(1, 123)  # 0xF601
RECEIVE_LIST_BROKEN = result(1, 258)  # 0x20401
MESSAGE_TOO_LARGE = result(1, 260)  # 0x20801

# cmif (module 10, sf)
CMIF_INVALID_HEADER_SIZE = result(10, 202)  # 0x1940A
CMIF_INVALID_IN_HEADER = result(10, 211)  # 0x1A60A
CMIF_UNKNOWN_COMMAND_ID = result(10, 221)  # 0x1BA0A
CMIF_INVALID_NUM_IN_OBJECTS = result(10, 235)  # 0x1D60A
CMIF_INVALID_IN_OBJECT = result(10, 239)  # 0x1DE0A

# hipc (module 11, sf::hipc)
HIPC_POINTER_BUFFER_TOO_SMALL = result(11, 141)  # 0x11A0B
HIPC_UNKNOWN_COMMAND_TYPE = result(11, 403)  # 0x3260B
HIPC_TARGET_NOT_DOMAIN = result(11, 491)  # 0x3D60B
HIPC_DOMAIN_OBJECT_NOT_FOUND = result(11, 492)  # 0x3D80B

# sm (module 21)
SM_INVALID_CLIENT = result(21, 2)  # 0x415
SM_INVALID_SERVICE_NAME = result(21, 6)  # 0xC15
SM_NOT_REGISTERED = result(21, 7)  # 0xE15
SM_NOT_ALLOWED = result(21, 8)  # 0x1015


class IpcError(Exception):
    """A request the kernel or a server refuses with ``code`` (``why`` for the log)."""

    def __init__(self, code: int, why: str) -> None:
        super().__init__(f"{why} (result {code:#x})")
        self.code = code
        self.why = why
