"""The design-review page: one self-contained HTML file (styles inline, charts as data URIs, no
scripts, no network) and a Markdown twin with the PNGs beside it. Every user-supplied string is
escaped: a scenario named `<script>` renders as text."""
from __future__ import annotations

import base64
import datetime as dt
from dataclasses import dataclass, field
from html import escape
from typing import Any, Sequence

from prefixsim.report.tables import HEADERS, fmt

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1b1b1b;background:#fff}
main{max-width:1040px;margin:0 auto;padding:24px 28px 64px}
h1{font-size:1.7rem;margin:0 0 4px}h2{font-size:1.3rem;margin:36px 0 8px;border-bottom:2px solid #0072B2;padding-bottom:4px}
h3{font-size:1.05rem;margin:22px 0 6px}p.meta{color:#555;margin:0 0 18px}
p.reading{background:#eef6fb;border-left:4px solid #0072B2;padding:8px 12px;margin:10px 0}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.85rem;margin:8px 0}
th,td{border:1px solid #d0d0d0;padding:4px 8px;vertical-align:top;overflow-wrap:anywhere}
th{background:#f3f3f3;text-align:left;overflow-wrap:normal;word-break:keep-all;hyphens:none}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
figure{margin:12px 0}figure img{max-width:100%;height:auto;border:1px solid #e3e3e3}
figcaption{font-size:.8rem;color:#555}
nav ul{columns:2;font-size:.9rem}
"""


@dataclass
class Figure:
    title: str
    png: bytes
    name: str            # file stem for the Markdown twin
    caption: str = ""


@dataclass
class Section:
    title: str
    intro: str = ""
    reading: str = ""
    tables: list[tuple[str, Sequence[dict], Sequence[str]]] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    anchor: str = ""


def _table_html(rows: Sequence[dict], cols: Sequence[str]) -> str:
    head = "".join(f"<th>{escape(HEADERS.get(c, c).replace('_', ' '))}</th>" for c in cols)
    body = []
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c)
            num = isinstance(v, (int, float)) and not isinstance(v, bool)
            cells.append(f'<td class="n">{escape(fmt(c, v))}</td>' if num else f"<td>{escape(fmt(c, v))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


#: The report's opening table: per scenario, the question, the answer and its margin.
SUMMARY_COLS = ("scenario", "question", "answer")


def page(title: str, sections: list[Section], assumptions: list[tuple[str, str]], generated: dt.date,
         summary: Sequence[dict] = ()) -> str:
    nav = "".join(f'<li><a href="#{escape(s.anchor)}">{escape(s.title)}</a></li>' for s in sections)
    parts = ["<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">",
             "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">",
             f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>",
             f"<h1>{escape(title)}</h1>",
             f"<p class=\"meta\">prefixsim design review, prices as of {escape(generated.isoformat())}. "
             f"Token hit rate = cache read ÷ prompt tokens (token-weighted).</p>",
             *(["<h2 id=\"summary\">Summary</h2>", _table_html(summary, SUMMARY_COLS)] if summary else []),
             f"<nav><ul>{nav}</ul></nav>",
             "<h2 id=\"assumptions\">Assumptions</h2>",
             _table_html([{"what": k, "value": v} for k, v in assumptions], ["what", "value"])]
    for s in sections:
        parts.append(f'<h2 id="{escape(s.anchor)}">{escape(s.title)}</h2>')
        if s.intro:
            parts.append(f"<p>{escape(s.intro)}</p>")
        if s.reading:
            parts.append(f'<p class="reading">{escape(s.reading)}</p>')
        for f in s.figures:
            data = base64.b64encode(f.png).decode()
            parts.append(f'<figure><img alt="{escape(f.title)}" src="data:image/png;base64,{data}">'
                         f"<figcaption>{escape(f.caption or f.title)}</figcaption></figure>")
        for caption, rows, cols in s.tables:
            parts.append(f"<h3>{escape(caption)}</h3>")
            parts.append(_table_html(rows, cols))
    parts.append("</main></body></html>\n")
    return "\n".join(parts)


def _md_cell(v: Any, c: str) -> str:
    return fmt(c, v).replace("|", "\\|").replace("\n", " ")


def markdown(title: str, sections: list[Section], assumptions: list[tuple[str, str]], generated: dt.date,
             image_dir: str, summary: Sequence[dict] = ()) -> str:
    out = [f"# {title}", "", f"prefixsim design review, prices as of {generated.isoformat()}.", ""]
    if summary:
        out += ["## Summary", "", "| " + " | ".join(SUMMARY_COLS) + " |", "|" + "---|" * len(SUMMARY_COLS)]
        out += ["| " + " | ".join(_md_cell(r.get(c), c) for c in SUMMARY_COLS) + " |" for r in summary]
        out.append("")
    out += ["## Assumptions", "", "| what | value |", "|---|---|"]
    out += [f"| {_md_cell(k, 'what')} | {_md_cell(v, 'value')} |" for k, v in assumptions]
    for s in sections:
        out += ["", f"## {s.title}", ""]
        if s.intro:
            out += [s.intro, ""]
        if s.reading:
            out += [f"> {s.reading}", ""]
        for f in s.figures:
            out += [f"![{f.title}]({image_dir}/{f.name}.png)", ""] + ([f"*{f.caption}*", ""] if f.caption else [])
        for caption, rows, cols in s.tables:
            out += [f"### {caption}", "", "| " + " | ".join(HEADERS.get(c, c) for c in cols) + " |",
                    "|" + "---|" * len(cols)]
            out += ["| " + " | ".join(_md_cell(r.get(c), c) for c in cols) + " |" for r in rows]
            out.append("")
    return "\n".join(out).rstrip() + "\n"
