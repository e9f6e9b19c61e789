"""Redis commands per window with idle joined sockets (docs/benchmarks.md): a private Redis, two nodes of
BINARY, ROOMS rooms of 10 users with one socket each (half on each node), joined; then
`CONFIG RESETSTAT` and `INFO commandstats` after WINDOW seconds (default 30) of nothing sent.

    .venv/bin/python scripts/idle-commands.py .build/debug/roomcast 20 [30]

Counts, not CPU: they do not depend on the machine's load."""
import sys, time, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "e2e"))
from roomcast_e2e import RedisServer, GatewayNode, Api, SocketClient, redis_cli

binary, rooms_count = sys.argv[1], int(sys.argv[2])
window = float(sys.argv[3]) if len(sys.argv) > 3 else 30.0
per_room = 10
redis = RedisServer()
nodes = []
clients = []
try:
    for name in ("1", "2"):
        nodes.append(GatewayNode(name, binary, redis.url, log_directory=redis.directory, privileged=True))
    api = Api(nodes[0].url)
    for r in range(rooms_count):
        accounts = [api.register("m") for _ in range(per_room)]
        room = api.create_room(accounts[0], participants=accounts[1:])
        for i, account in enumerate(accounts):
            node = nodes[(r * per_room + i) % 2]
            client = SocketClient(f"{r}-{i}").connect(node.url, auth={"token": account.token})
            ack = client.call("room:join", {"roomId": room["id"]})
            assert "data" in ack, ack
            clients.append(client)
    time.sleep(3)
    port = str(redis.port)
    redis_cli("-p", port, "CONFIG", "RESETSTAT")
    time.sleep(window)
    stats = redis_cli("-p", port, "INFO", "commandstats")
    total = 0
    for line in stats.splitlines():
        if line.startswith("cmdstat_"):
            name, rest = line.split(":", 1)
            calls = int(rest.split(",")[0].split("=")[1])
            total += calls
            print(f"{name[8:]:>20} {calls}")
    print(f"{'total':>20} {total}  ({len(clients)} sockets, {rooms_count} rooms, 2 nodes, {window:.0f} s)")
finally:
    for client in clients:
        try:
            client.sio.disconnect()
        except Exception:
            pass
    for node in nodes:
        node.stop()
    redis.destroy()
