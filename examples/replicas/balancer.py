"""A round-robin HTTP balancer on loopback (aiohttp), as a load balancer sits in front of a host's replicas.

``python examples/replicas/balancer.py --port 3978 http://127.0.0.1:4001 http://127.0.0.1:4002 ...``; ``run.py``
starts it in-process. Each request goes to the next replica in turn, its body and answer streamed through;
``observe`` (if given) sees each request's method, path, headers and body first (the replicas benchmark counts
what reaches the platform that way).
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Callable, Sequence

import aiohttp
from aiohttp import web

Observer = Callable[[str, str, "dict[str, str]", bytes], None]
HOP = {"host", "content-length", "transfer-encoding", "connection", "keep-alive"}


def balancer(
    targets: Sequence[str], observe: Observer | None = None, timeout: float = 60.0
) -> web.Application:
    turn = itertools.cycle([t.rstrip("/") for t in targets])
    app = web.Application(client_max_size=64 * 1024 * 1024)

    async def session(app: web.Application):  # type: ignore[no-untyped-def]
        connector = aiohttp.TCPConnector(limit=0)
        app["client"] = aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=timeout)
        )
        yield
        await app["client"].close()

    async def forward(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        if observe is not None:
            observe(request.method, request.path_qs, headers, body)
        headers["Host"] = request.host  # the replica (or platform) sees the address it was asked at
        target = next(turn)
        try:
            upstream = await app["client"].request(
                request.method, target + request.path_qs, headers=headers, data=body, allow_redirects=False
            )
        except (aiohttp.ClientError, TimeoutError):
            return web.Response(status=502, text="replica unreachable")
        async with upstream:
            response = web.StreamResponse(status=upstream.status)
            for name, value in upstream.headers.items():
                if name.lower() not in HOP:
                    response.headers.add(name, value)
            await response.prepare(request)
            try:
                async for chunk in upstream.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
            except (aiohttp.ClientError, ConnectionError):
                pass  # the client went away (an MCP event stream it closed): nothing more to send
            return response

    app.cleanup_ctx.append(session)
    app.router.add_route("*", "/{tail:.*}", forward)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=3978)
    parser.add_argument("targets", nargs="+")
    args = parser.parse_args()
    web.run_app(balancer(args.targets), host="127.0.0.1", port=args.port, print=None)


if __name__ == "__main__":
    main()
