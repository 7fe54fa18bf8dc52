"""For the release workflow: which package a tag or input names, and that version's changelog notes.

uv run python scripts/release_info.py <tag or package>            # package=, distribution=, version=
uv run python scripts/release_info.py <tag or package> --notes    # the "## <version>" section
"""

from __future__ import annotations

import argparse
import sys

from _workspace import changelog_sections, find_member


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("name", help="`<distribution>==<version>` tag, distribution or short name")
    parser.add_argument("--notes", action="store_true")
    args = parser.parse_args(argv)
    name, _, tagged = args.name.partition("==")
    member = find_member(name)
    if tagged and tagged != member.version:
        print(f"tag {args.name} does not match {member.distribution} {member.version}", file=sys.stderr)
        return 1
    if args.notes:
        for title, body in changelog_sections(member.changelog.read_text(encoding="utf-8")).items():
            if title.split(" ", 1)[0] == member.version:
                print(body)
                return 0
        print(f"no '## {member.version}' section in {member.changelog}", file=sys.stderr)
        return 1
    print(f"package={member.short}\ndistribution={member.distribution}\nversion={member.version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
