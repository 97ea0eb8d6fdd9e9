"""signing: make the human's Canon commits and review decisions SSH-signed (opt-in)."""

from __future__ import annotations

from pathlib import Path

import click

from evolving_agent.cli._common import echo_json, json_option, root_from
from evolving_agent.cli._output import echo
from evolving_agent.memory.canon.signing import SigningState, enable_signing, signing_state
from evolving_agent.memory.root import require_root


@click.group("signing")
def signing_group() -> None:
    """Signed human authority: without it, "human" is a claim anyone can make."""


def _print(state: SigningState) -> None:
    if not state.enabled:
        echo("signing: off (human authority is a claim; see docs/authority.md)")
        return
    echo(f"signing: on, key {state.fingerprint}")
    echo(f"pinned: {state.pinned or '(not for this user: the root copy is used to check)'}")
    echo(f"allowed signers: {state.allowed_signers}")
    echo(f"since commit: {state.since[:10] or '-'}")
    if state.problem:
        echo(f"problem: {state.problem}")


@signing_group.command("enable")
@click.option(
    "--key",
    "key",
    required=True,
    type=click.Path(path_type=Path),
    help="SSH private key (or its .pub, with the key in ssh-agent).",
)
@click.pass_context
def enable_cmd(ctx: click.Context, key: Path) -> None:
    """Sign the human's Canon commits and review decisions with an SSH key from now on.

    The key's fingerprint and an allowed-signers file are pinned in
    $XDG_CONFIG_HOME/evolving-agent/signing/ (outside the root); verify and boot then
    report an unsigned or wrongly signed human commit or decision as tampering.
    Keep the key out of the assistant's reach: ssh-add -c, a hardware key, or
    another OS user.

    \b
    Example:
      evolving-agent signing enable --key ~/.ssh/id_ed25519
    """
    state = enable_signing(require_root(root_from(ctx)), key)
    echo(f"signing enabled: key {state.fingerprint}, pinned in {state.pinned}")


@signing_group.command("status")
@json_option
@click.pass_context
def status_cmd(ctx: click.Context, as_json: bool) -> None:
    """Whether signing is on for this root, with which key, pinned where.

    \b
    Example:
      evolving-agent signing status --json
    """
    state = signing_state(require_root(root_from(ctx)))
    if as_json:
        echo_json(state.to_json())
    else:
        _print(state)


def register(group: click.Group) -> None:
    group.add_command(signing_group)
