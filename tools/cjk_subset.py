"""Make the chart's CJK font: the characters the weekly chart draws in Chinese, cut from Noto Sans SC.

The chart's Chinese text is our own closed set of words (adapters/chart.py, analysis/labels.py): a
subset of a few dozen glyphs is some 20 KB where the whole font is 8-16 MB, and it needs no system
font and no font package. Run it again whenever those words change (a test fails until you do):

    python tools/cjk_subset.py SOURCE.otf

SOURCE is any Noto Sans SC / Noto Sans CJK SC Regular (OFL-1.1): Debian's fonts-noto-cjk
(/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc), or NotoSansSC-Regular.otf from Google Fonts.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fontTools import subset

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from adapters.chart import SUBSET_FONT, chart_characters  # noqa: E402


def main(source: str) -> None:
    text = "".join(sorted(chart_characters()))
    options = subset.Options()
    options.name_IDs = ["*"]  # keep the family name: matplotlib finds it as "Noto Sans SC"
    options.name_languages = ["*"]
    options.layout_features = ["*"]
    options.font_number = next(  # in a collection (.ttc), the Simplified Chinese face
        (i for i, name in enumerate(_faces(source)) if "SC" in name), 0
    )
    font = subset.load_font(source, options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=text)
    subsetter.subset(font)
    font.save(str(SUBSET_FONT))
    print(f"{SUBSET_FONT.relative_to(ROOT)}: {len(text)} characters, {SUBSET_FONT.stat().st_size} bytes")


def _faces(source: str) -> list[str]:
    from fontTools.ttLib import TTCollection

    if not source.lower().endswith((".ttc", ".otc")):
        return [""]
    return [str(face["name"].getDebugName(1)) for face in TTCollection(source).fonts]


if __name__ == "__main__":
    main(sys.argv[1])
