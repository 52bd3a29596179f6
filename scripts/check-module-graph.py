#!/usr/bin/env python3
"""Holds the README's table of products to Package.swift: each library target's direct
dependencies must be the ones its "Builds on" column names."""
import json
import re
import subprocess
import sys

described = json.loads(subprocess.run(
    ["swift", "package", "describe", "--type", "json"], check=True, capture_output=True, text=True).stdout)
targets = {t["name"]: sorted(t.get("target_dependencies") or [])
           for t in described["targets"] if t["type"] == "library"}

readme = open("README.md", encoding="utf-8").read()
documented = {}
for line in readme.splitlines():
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    if len(cells) == 3 and re.fullmatch(r"`Strata\w*`", cells[0]):
        name = cells[0].strip("`")
        if cells[2] == "every layer but `StrataTesting`":
            documented[name] = sorted(t for t in targets if t not in (name, "StrataTesting"))
        else:
            documented[name] = sorted(re.findall(r"`(\w+)`", cells[2]))

problems = [f"{name}: Package.swift says {deps}, README says {documented.get(name)}"
            for name, deps in sorted(targets.items()) if documented.get(name) != deps]
problems += [f"{name}: in README, not a library target" for name in documented if name not in targets]
if problems:
    print("The README's module table does not match Package.swift:", *problems, sep="\n  ")
    sys.exit(1)
print(f"module graph: {len(targets)} library targets, README matches Package.swift")
