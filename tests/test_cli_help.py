"""The CLI explains itself: a version, and help text for every command, option and argument."""
from __future__ import annotations

import argparse
import subprocess
import sys

import lambdarag
from lambdarag.orchestration.cli import parser


def test_every_option_of_every_command_says_what_it_is_for():
    undescribed = []
    for action in parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                undescribed += [f"{name} {a.option_strings or a.dest}" for a in command._actions
                                if not a.help and not isinstance(a, argparse._HelpAction)]
        elif not action.help:
            undescribed.append(str(action.option_strings))
    assert undescribed == []


def test_version_prints_the_package_version():
    out = subprocess.run([sys.executable, "-m", "lambdarag.orchestration.cli", "--version"], capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == f"lambdarag {lambdarag.__version__}"


def test_search_is_ask_under_another_name():
    args = parser().parse_args(["search", "--json", "船长有什么权力？"])
    assert args.command == "search" and args.json and args.question == ["船长有什么权力？"]
    assert "ask (search)" in parser().format_help()
