"""signing: make the human's Canon commits and review decisions SSH-signed (opt-in)."""

from __future__ import annotations

from pathlib import Path

import click

from evolving_agent.cli._common import echo_json, json_option, root_from
from evolving_agent.cli._output import echo
from evolving_agent.memory.canon.signing import SigningState, signing_state
from evolving_agent.memory.evidence import signing_chain
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
@click.option(
    "--previous-key",
    type=click.Path(path_type=Path),
    default=None,
    help="Re-pinning: the key in force, when this user has no pinned copy of it.",
)
@click.option(
    "--accept-unsigned",
    is_flag=True,
    help="Vouch, with the key, for the unsigned human writes listed by a refused enable.",
)
@click.pass_context
def enable_cmd(
    ctx: click.Context, key: Path, previous_key: Path | None, accept_unsigned: bool
) -> None:
    """Sign the human's Canon commits, review decisions and Today writes from now on.

    The key's fingerprint and an allowed-signers file are pinned in
    $XDG_CONFIG_HOME/evolving-agent/signing/ (outside the root), and the change is a
    signed record in Evidence: verify and boot then report an unsigned or wrongly
    signed human commit or decision as tampering.  While signing is on, re-pinning
    to another key must be signed by the key in force (or it is refused, exit 3).
    Keep the key out of the assistant's reach: ssh-add -c, a hardware key, or
    another OS user.

    \b
    Example:
      evolving-agent signing enable --key ~/.ssh/id_ed25519
    """
    change = signing_chain.enable(
        require_root(root_from(ctx)),
        key,
        previous_key=previous_key,
        accept_unsigned=accept_unsigned,
    )
    echo(change.message)


@signing_group.command("disable")
@click.option(
    "--key",
    "key",
    type=click.Path(path_type=Path),
    default=None,
    help="The key in force, when this user has no pinned copy of it.",
)
@click.pass_context
def disable_cmd(ctx: click.Context, key: Path | None) -> None:
    """Turn signing off: a record in Evidence, signed by the key in force (else exit 3).

    From then on "human" is a claim again (verify says so).  Turning it on again
    later keeps counting from the first enable: human writes made while it was off
    must be vouched for (signing enable --accept-unsigned).

    \b
    Example:
      evolving-agent signing disable
    """
    echo(signing_chain.disable(require_root(root_from(ctx)), key=key).message)


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
