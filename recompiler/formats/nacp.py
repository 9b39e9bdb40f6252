"""The parts of a NACP (application control property, 0x4000 bytes) that tools show: the
title and publisher in each of the 16 languages, the display version and the ids."""

from __future__ import annotations

from dataclasses import dataclass

from recompiler.formats.binreader import BinReader

NACP_SIZE = 0x4000
LANGUAGES = (
    "AmericanEnglish",
    "BritishEnglish",
    "Japanese",
    "French",
    "German",
    "LatinAmericanSpanish",
    "Spanish",
    "Italian",
    "Dutch",
    "CanadianFrench",
    "Portuguese",
    "Russian",
    "Korean",
    "TraditionalChinese",
    "SimplifiedChinese",
    "BrazilianPortuguese",
)
TITLE_SIZE, NAME_SIZE, PUBLISHER_SIZE = 0x300, 0x200, 0x100
DISPLAY_VERSION, DISPLAY_VERSION_SIZE = 0x3060, 0x10
PRESENCE_GROUP_ID, SAVE_DATA_OWNER_ID = 0x3038, 0x3078


@dataclass(frozen=True)
class Nacp:
    titles: dict[str, tuple[str, str]]  # language -> (name, publisher), non-empty ones only
    display_version: str
    presence_group_id: int
    save_data_owner_id: int

    @property
    def name(self) -> str:
        return next(iter(self.titles.values()), ("", ""))[0]


def parse_nacp(r: BinReader) -> Nacp:
    """``r`` covers exactly the NACP."""
    if len(r) != NACP_SIZE:
        raise r.error("NACP", 0, f"size {len(r):#x} is not {NACP_SIZE:#x}")
    titles = {}
    for i, lang in enumerate(LANGUAGES):
        name = r.cstr(f"NACP.Title[{lang}].Name", i * TITLE_SIZE, NAME_SIZE)
        pub = r.cstr(f"NACP.Title[{lang}].Publisher", i * TITLE_SIZE + NAME_SIZE, PUBLISHER_SIZE)
        if name or pub:
            titles[lang] = (name, pub)
    return Nacp(
        titles,
        r.cstr("NACP.DisplayVersion", DISPLAY_VERSION, DISPLAY_VERSION_SIZE),
        r.u64("NACP.PresenceGroupId", PRESENCE_GROUP_ID),
        r.u64("NACP.SaveDataOwnerId", SAVE_DATA_OWNER_ID),
    )
