"""nn::hid: the npad (gamepad) state the game polls.  Headless runs read a scripted input file;
windowed runs get live state from the GPU process's window (``set_live``).  The input frame
is the number of frames presented so far (``advance_frame``, called at each present), so a
fixed-step game that polls once per frame sees the same input at the same frame on every run.

Script format, one line per change (``#`` starts a comment)::

    FRAME  BUTTONS  [LX LY [RX RY]]
    0      -                        # nothing pressed
    30     A+Right   0 0            # from frame 30: A and d-pad right held
    45     -         20000 -32768   # sticks in [-32768, 32767]

BUTTONS is ``-`` or names joined by ``+``: A B X Y StickL StickR L R ZL ZR Plus Minus Left Up
Right Down.  A line holds until the next one."""

from __future__ import annotations

import bisect
import struct
import threading
from dataclasses import dataclass, field
from pathlib import Path

from cpu_host.horizon.hle.abi import Call
from cpu_host.horizon.hle.registry import HostFunction
from nxrecomp.common.errors import NxError

BUTTONS = ["A", "B", "X", "Y", "StickL", "StickR", "L", "R", "ZL", "ZR", "Plus", "Minus", "Left", "Up", "Right", "Down"]
BIT = {n.lower(): 1 << i for i, n in enumerate(BUTTONS)}
ATTR_CONNECTED = 1
# NpadFullKeyState / NpadHandheldState: sampling number, buttons, left and right stick, attributes
STATE = struct.Struct("<qQiiiiI4x")
NPAD_HANDHELD = 0x20
NPAD_NO1 = 0


@dataclass(frozen=True)
class PadState:
    buttons: int = 0
    lx: int = 0
    ly: int = 0
    rx: int = 0
    ry: int = 0


def parse_script(text: str, path: str = "<input>") -> list[tuple[int, PadState]]:
    rows: list[tuple[int, PadState]] = []
    for n, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        where = f"line {n}"
        if len(words) not in (2, 4, 6):
            raise NxError(f"{where}: expected FRAME BUTTONS [LX LY [RX RY]], got {len(words)} fields", path=path)
        try:
            frame = int(words[0])
            sticks = [int(w) for w in words[2:]] + [0] * (6 - len(words))
        except ValueError as e:
            raise NxError(f"{where}: {e}", path=path) from None
        if frame < 0 or (rows and frame <= rows[-1][0]):
            raise NxError(f"{where}: frame {frame} does not follow frame {rows[-1][0] if rows else -1}", path=path)
        if any(not -32768 <= v <= 32767 for v in sticks):
            raise NxError(f"{where}: stick values must lie in [-32768, 32767]", path=path)
        bits = 0
        if words[1] != "-":
            for name in words[1].split("+"):
                if name.lower() not in BIT:
                    raise NxError(f"{where}: unknown button {name!r} (known: {' '.join(BUTTONS)})", path=path)
                bits |= BIT[name.lower()]
        rows.append((frame, PadState(bits, *sticks)))
    return rows


@dataclass
class HidService:
    script: list[tuple[int, PadState]] = field(default_factory=list)
    frame: int = 0
    sampling: int = 0
    live: PadState | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    presented: bool = False  # frames are presented: they step the script (else the hid service's tick does)

    @classmethod
    def from_file(cls, path: str) -> "HidService":
        if not path:
            return cls()
        p = Path(path)
        try:
            text = p.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise NxError(f"cannot read the input script: {e}", path=str(p)) from None
        return cls(parse_script(text, str(p)))

    def present(self) -> None:
        """A frame was presented: the scripted input's clock from now on."""
        self.presented = True
        self.advance_frame()

    def advance_frame(self) -> None:
        with self.lock:
            self.frame += 1

    def set_live(self, state: PadState) -> None:
        with self.lock:
            self.live = state

    def state_now(self) -> PadState:
        if self.live is not None:
            return self.live
        i = bisect.bisect_right(self.script, self.frame, key=lambda row: row[0]) - 1
        return self.script[i][1] if i >= 0 else PadState()

    def noop(self, c: Call) -> None:
        return None

    def get_npad_state(self, c: Call) -> None:
        npad = c.read_u32(c.arg(1), "NpadIdType")
        with self.lock:
            self.sampling += 1
            s = self.state_now() if npad in (NPAD_NO1, NPAD_HANDHELD) else PadState()
            attrs = ATTR_CONNECTED if npad in (NPAD_NO1, NPAD_HANDHELD) else 0
            c.write(c.arg(0), STATE.pack(self.sampling, s.buttons, s.lx, s.ly, s.rx, s.ry, attrs), "npad state out")

    def functions(self) -> list[HostFunction]:
        F = HostFunction
        return [
            F("_ZN2nn3hid14InitializeNpadEv", "nn::hid::InitializeNpad()", self.noop),
            F(
                "_ZN2nn3hid25SetSupportedNpadStyleSetENS_4util10BitFlagSetILi32ENS0_12NpadStyleTagEEE",
                "nn::hid::SetSupportedNpadStyleSet(NpadStyleSet)",
                self.noop,
            ),
            F("_ZN2nn3hid22SetSupportedNpadIdTypeEPKjm", "nn::hid::SetSupportedNpadIdType(const NpadIdType*, size_t)", self.noop),
            F(
                "_ZN2nn3hid12GetNpadStateEPNS0_16NpadFullKeyStateERKj",
                "nn::hid::GetNpadState(NpadFullKeyState*, const NpadIdType&)",
                self.get_npad_state,
            ),
            F(
                "_ZN2nn3hid12GetNpadStateEPNS0_17NpadHandheldStateERKj",
                "nn::hid::GetNpadState(NpadHandheldState*, const NpadIdType&)",
                self.get_npad_state,
            ),
        ]
