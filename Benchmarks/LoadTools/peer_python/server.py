#!/usr/bin/env python3
"""Reference peer: python-socketio AsyncServer relaying room events through
Redis (socketio.AsyncRedisManager), for benchmarking with sioload.

    python server.py PORT [--mode aiohttp|uvicorn] [--redis URL]
                          [--ping-interval S] [--ping-timeout S] [--jwt-secret S]

Handlers:
  connect(sid, environ, auth)  accepts any auth object carrying a "token" (with
                               --jwt-secret: an HS256 JWT signed with it, not
                               expired, as an app would check it)
  "room:join"   {roomId}       enter_room(sid, roomId); returns True (ack)
  "bench:publish" {roomId,...} emit "bench:message" with the same payload to
                               the room, sender included

Run two or more of these on different ports against the same Redis; an emit
on one node is handled locally and published on the Redis channel
"socketio", and every other node delivers it to its own room members.
"""
import argparse
import asyncio
import base64
import hashlib
import hmac
import json
import logging
import os
import sys
import time

import socketio


def _b64url(part):
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def verify_jwt(token, secret):
    """An HS256 JWT's claims when its signature is good and it has not expired, else None."""
    if not isinstance(token, str):
        return None
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        header = json.loads(_b64url(parts[0]))
        if not isinstance(header, dict) or header.get("alg") != "HS256":
            return None
        expected = hmac.new(secret, (parts[0] + "." + parts[1]).encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(expected, _b64url(parts[2])):
            return None
        claims = json.loads(_b64url(parts[1]))
    except ValueError:
        return None
    if not isinstance(claims, dict):
        return None
    exp = claims.get("exp")
    if isinstance(exp, (int, float)) and exp <= time.time():
        return None
    return claims


def build_sio(redis_url, ping_interval, ping_timeout, async_mode, jwt_secret=None):
    mgr = socketio.AsyncRedisManager(redis_url)
    sio = socketio.AsyncServer(
        async_mode=async_mode,
        client_manager=mgr,
        cors_allowed_origins="*",
        logger=False,
        engineio_logger=False,
        ping_interval=ping_interval,
        ping_timeout=ping_timeout,
        transports=["websocket", "polling"],
    )

    @sio.event
    async def connect(sid, environ, auth):
        if not isinstance(auth, dict) or not auth.get("token"):
            # rejected connections get 44{"message": ...}
            return False
        if jwt_secret is not None and verify_jwt(auth["token"], jwt_secret) is None:
            return False
        return True

    @sio.on("room:join")
    async def room_join(sid, data):
        room = data.get("roomId") if isinstance(data, dict) else None
        if not room:
            return False
        await sio.enter_room(sid, room)
        return True

    @sio.on("bench:publish")
    async def bench_publish(sid, data):
        room = data.get("roomId") if isinstance(data, dict) else None
        if not room:
            return
        await sio.emit("bench:message", data, room=room)

    return sio


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--mode", choices=["aiohttp", "uvicorn"], default="aiohttp")
    ap.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    ap.add_argument("--ping-interval", type=float, default=25)
    ap.add_argument("--ping-timeout", type=float, default=20)
    ap.add_argument("--backlog", type=int, default=4096)
    ap.add_argument("--jwt-secret", default=None,
                    help="accept only HS256 JWTs signed with this secret as the token")
    ap.add_argument("--ws", default="websockets-sansio",
                    help="uvicorn WebSocket implementation (websockets-sansio, websockets, wsproto)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    secret = args.jwt_secret.encode() if args.jwt_secret is not None else None

    try:
        import uvloop  # noqa: F401
        have_uvloop = True
    except ImportError:
        have_uvloop = False

    if args.mode == "aiohttp":
        from aiohttp import web

        if have_uvloop:
            import uvloop
            asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
        sio = build_sio(args.redis, args.ping_interval, args.ping_timeout, "aiohttp", secret)
        app = web.Application()
        sio.attach(app)
        print(f"peer_python aiohttp{'+uvloop' if have_uvloop else ''} pid={os.getpid()} "
              f"port={args.port}", file=sys.stderr, flush=True)
        web.run_app(app, host=args.host, port=args.port, backlog=args.backlog,
                    print=None, access_log=None)
    else:
        import uvicorn

        sio = build_sio(args.redis, args.ping_interval, args.ping_timeout, "asgi", secret)
        app = socketio.ASGIApp(sio)
        print(f"peer_python uvicorn{'+uvloop' if have_uvloop else ''} pid={os.getpid()} "
              f"port={args.port}", file=sys.stderr, flush=True)
        uvicorn.run(app, host=args.host, port=args.port, backlog=args.backlog,
                    loop="uvloop" if have_uvloop else "asyncio",
                    http="httptools", ws=args.ws, log_level="warning",
                    access_log=False, lifespan="off", ws_max_size=1_000_000)


if __name__ == "__main__":
    main()
