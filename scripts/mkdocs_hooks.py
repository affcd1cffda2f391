"""MkDocs hooks (``hooks:`` in mkdocs.yml) for a site that works opened from disk.

The 404 page is rendered without a page of its own, so MkDocs writes its links from the site's root (``/assets/...``,
``/index.html``), which from ``file://`` lead to the root of the disk. It lies at the root of the site, so the same
links without the leading ``/`` reach the same files, from disk and from a server alike (for a 404 of the root).
"""

from __future__ import annotations

import re
from typing import Any

ROOTED = re.compile(r'((?:href|src|action)=")/(?!/)')


def on_post_template(output_content: str, template_name: str, config: Any) -> str:
    if template_name != "404.html":
        return output_content
    relative = ROOTED.sub(r"\1", output_content).replace('href=""', 'href="index.html"')
    return relative.replace('"base": "/"', '"base": "."')
