"""SARIF 2.1.0, as GitHub code scanning accepts it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import PurePath

from devlint import __version__
from devlint.finding import Finding

_HELP_BASE = "https://github.com/devlint/devlint/blob/main/rules/"


def render(findings: Sequence[Finding], color: bool) -> str:
    from devlint.pages import rule_page
    from devlint.rules import all_infos

    infos = all_infos()
    index = {info.code: i for i, info in enumerate(infos)}
    rules = []
    for info in infos:
        page = rule_page(info.code) or info.summary
        rules.append(
            {
                "id": info.code,
                "name": info.name,
                "shortDescription": {"text": info.summary},
                "fullDescription": {"text": info.summary},
                "helpUri": f"{_HELP_BASE}{info.code}.md",
                "help": {"text": page, "markdown": page},
                "defaultConfiguration": {"level": "error" if info.default_enabled else "none"},
            }
        )
    results = [
        {
            "ruleId": f.code,
            "ruleIndex": index.get(f.code, 0),
            "level": "error",
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": PurePath(f.path).as_posix()},
                        "region": {
                            "startLine": f.start.line,
                            "startColumn": f.start.column,
                            "endLine": f.end.line,
                            "endColumn": f.end.column,
                        },
                    }
                }
            ],
        }
        for f in findings
    ]
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "devlint",
                        "version": __version__,
                        "informationUri": "https://github.com/devlint/devlint",
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2) + "\n"
