"""The CPU host's co-op client (a host thread + UDP socket talking to ``relay/``)."""

from cpu_host.coop.client import ALL, CoopClient, CoopError, Message, PeerEvent

__all__ = ["ALL", "CoopClient", "CoopError", "Message", "PeerEvent"]
