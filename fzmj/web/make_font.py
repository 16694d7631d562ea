"""Writes ``static/cjk_font.css``: the few Chinese characters the pages draw, as an embedded font.

A machine without a CJK font would draw the pages' Chinese labels (吃 碰 杠 胡, 金, 过水, the value
lines...) as boxes; the tiles are SVG and need no font. So the pages carry their own font: a
subset of WenQuanYi Micro Hei (Apache License 2.0; Debian's ``fonts-wqy-microhei``) holding only
the characters that occur in the pages' sources, as a WOFF data URI with a ``unicode-range``, so it
draws those characters and nothing else. ``tests/test_web.py`` checks that every Chinese character
in the sources is in the shipped font; after adding a label, run (the font package installed)::

    python -m fzmj.web.make_font [--font /usr/share/fonts/truetype/wqy/wqy-microhei.ttc]

fontTools comes with matplotlib, one of our dependencies; nothing here runs when a page is made.
"""

from __future__ import annotations

import argparse
import base64
import io
import re
from pathlib import Path

WEB = Path(__file__).resolve().parent
OUT = WEB / "static" / "cjk_font.css"
FAMILY = "fzmj-cjk"
DEFAULT_FONT = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")  # CJK radicals..ideographs, compat, fullwidth


def page_characters() -> list[str]:
    """Every CJK character in the pages' sources (static files, the web package's Python, the tile glyphs)."""
    from fzmj_env.tiles import GLYPHS

    texts = [p.read_text(encoding="utf-8") for p in sorted((WEB / "static").iterdir()) if p.name != OUT.name]
    texts += [p.read_text(encoding="utf-8") for p in sorted(WEB.glob("*.py"))]
    texts += list(GLYPHS)
    return sorted(set(CJK.findall("".join(texts))))


def font_characters(css: str) -> set[str]:
    """The characters the embedded font of ``css`` (the text of ``cjk_font.css``) can draw."""
    from fontTools.ttLib import TTFont

    data = re.search(r"base64,([A-Za-z0-9+/=]+)", css).group(1)
    font = TTFont(io.BytesIO(base64.b64decode(data)))
    return {chr(c) for c in font.getBestCmap()}


def build(font_path: str) -> str:
    from fontTools import subset
    from fontTools.ttLib import TTFont

    chars = page_characters()
    options = subset.Options()
    options.flavor = "woff"  # zlib, no extra dependency (woff2 needs brotli)
    options.layout_features = []
    options.name_IDs = [0, 1, 2, 13]  # copyright, family, style, license
    options.hinting = False
    font = TTFont(font_path, fontNumber=0, lazy=False)
    sub = subset.Subsetter(options)
    sub.populate(text="".join(chars))
    sub.subset(font)
    buf = io.BytesIO()
    subset.save_font(font, buf, options)
    ranges = ",".join(f"U+{ord(c):04X}" for c in chars)
    b64 = base64.b64encode(buf.getvalue()).decode("ascii")
    return (
        f"/* The pages' {len(chars)} Chinese characters, a subset of WenQuanYi Micro Hei (Apache License 2.0),\n"
        "   so they draw without a CJK font on the machine. Written by `python -m fzmj.web.make_font`. */\n"
        f'@font-face {{ font-family: "{FAMILY}"; font-display: block; unicode-range: {ranges};\n'
        f'  src: url(data:font/woff;base64,{b64}) format("woff"); }}\n'
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fzmj.web.make_font", description=__doc__.split("\n")[0])
    ap.add_argument("--font", default=DEFAULT_FONT, help=f"the font to subset (default {DEFAULT_FONT})")
    args = ap.parse_args(argv)
    css = build(args.font)
    OUT.write_text(css, encoding="utf-8")
    print(f"{OUT}: {len(page_characters())} characters, {len(css):,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
