"""Command line entry point: ``a365-emulator`` / ``python -m agents_a365.emulator``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import re
import signal
import sys
from collections.abc import Sequence

from agents_a365.emulator.config import EmulatorConfig
from agents_a365.emulator.emulator import Emulator


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="a365-emulator", description="Local emulator of the Microsoft Agent 365 platform."
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port (0 = any free port; default 8765)")
    parser.add_argument("--config", help="JSON config file (see the package README)")
    parser.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"], help="log level"
    )
    return parser


def _banner(emu: Emulator) -> str:
    lines = [f"Agent 365 emulator running at {emu.base_url}", f"  gateway: {emu.gateway_url()}"]
    for name, server in emu.servers.items():
        audience = server.config.audience or "platform audience (V1)"
        lines.append(f"  mcp server {name} ({server.kind}): {emu.server_url(name)}  audience: {audience}")
    lines.append(f"  threat protection: {emu.rtp_url}")
    lines.append(f"  inspect: {emu.base_url}/_emulator/requests")
    lines.append("Platform token (valid 24h):")
    lines.append(emu.platform_token(expires_in=TOKEN_LIFETIME))
    lines.append("Development settings for the ToolingManifest.json path (paste into your shell or .env):")
    lines.extend(dev_env_lines(emu))
    lines.append("Press Ctrl-C to stop.")
    return "\n".join(lines)


TOKEN_LIFETIME = 24 * 3600


def env_token_name(server_name: str) -> str:
    """The variable the tooling reads a server's development token from (same rule as the tooling)."""
    return "BEARER_TOKEN_" + re.sub(r"[^A-Z0-9]", "_", server_name.upper())


def dev_env_lines(emu: Emulator) -> list[str]:
    """``export KEY=value`` lines (valid for a POSIX shell and for ``.env`` files): the endpoint, a platform token, and one token per server for its own audience.

    A V2 server (own audience) refuses the platform token, so each server gets its own variable.
    """
    lines = [
        f"export MCP_PLATFORM_ENDPOINT={emu.base_url}",
        f"export BEARER_TOKEN={emu.platform_token(expires_in=TOKEN_LIFETIME)}",
    ]
    for name in emu.servers:
        token = emu.server_token(name, expires_in=TOKEN_LIFETIME)
        lines.append(f"export {env_token_name(name)}={token}")
    return lines


async def _serve(config: EmulatorConfig, host: str, port: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    async with Emulator(config, host=host, port=port) as emu:
        print(_banner(emu), flush=True)  # noqa: T201 - the CLI reports to its user on stdout
        await stop.wait()


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        config = EmulatorConfig.from_file(args.config) if args.config else EmulatorConfig()
    except (OSError, ValueError) as exc:
        print(f"a365-emulator: invalid config: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(config, args.host, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
