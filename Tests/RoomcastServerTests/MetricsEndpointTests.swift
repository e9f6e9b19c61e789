import Foundation
import NIOCore
import RedisClient
import RoomcastServer
import RoomcastTestSupport
import Testing

@Suite("GET /metrics on a node run as a process", .serialized)
struct MetricsEndpointTests {
    /// Every metric docs/operations/observability.md documents; each must be in every scrape, with its HELP and TYPE.
    static let documented: [String: String] = [
        "roomcast_sockets_connected": "gauge",
        "roomcast_channels_subscribed": "gauge",
        "roomcast_events_received_total": "counter",
        "roomcast_frames_delivered_total": "counter",
        "roomcast_fanout_flushes_total": "counter",
        "roomcast_fanout_latency_seconds": "histogram",
        "roomcast_redis_command_duration_seconds": "histogram",
        "roomcast_redis_command_errors_total": "counter",
        "roomcast_pubsub_reconnects_total": "counter",
        "roomcast_gap_repairs_total": "counter",
        "roomcast_gap_closes_total": "counter",
        "roomcast_rejected_inputs_total": "counter",
        "roomcast_push_jobs_total": "counter",
        "roomcast_push_delivery_latency_seconds": "histogram",
        "roomcast_socket_connects_total": "counter",
        "roomcast_socket_disconnects_total": "counter",
        "roomcast_build_info": "gauge",
        "roomcast_process_cpu_seconds_total": "counter",
        "roomcast_process_resident_memory_bytes": "gauge",
        "roomcast_process_open_fds": "gauge",
        "roomcast_process_max_fds": "gauge",
    ]

    /// Scrapes the node and parses the whole text strictly.
    static func scrape(_ node: GatewayProcess, sourceLocation: SourceLocation = #_sourceLocation) async throws -> PrometheusExposition {
        let response = try await HTTPTestClient.request(port: node.port, path: "/metrics")
        #expect(response.status == 200, sourceLocation: sourceLocation)
        #expect(response.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true, "\(response.headers)", sourceLocation: sourceLocation)
        let metrics = try PrometheusExposition(parsing: response.text)
        for (name, type) in documented {
            let family = try #require(metrics.families[name], "\(name) missing from\n\(response.text)", sourceLocation: sourceLocation)
            #expect(family.type == type, "\(name)", sourceLocation: sourceLocation)
            #expect(family.help?.isEmpty == false, "\(name) has no HELP", sourceLocation: sourceLocation)
        }
        for (name, family) in metrics.families where name.hasPrefix("roomcast_") {
            // Prometheus naming: counters end in _total, durations are histograms in seconds.
            #expect((family.type == "counter") == name.hasSuffix("_total"), "\(name)", sourceLocation: sourceLocation)
            #expect((family.type == "histogram") == name.hasSuffix("_seconds"), "\(name)", sourceLocation: sourceLocation)
        }
        return metrics
    }

    @Test("counters move with traffic, gauges follow connections, and the text parses as Prometheus exposition format")
    func countersMoveWithTraffic() async throws {
        try await TestRedis.with { redis in
            let node = try await GatewayProcess(arguments: ["--redis-url", redis.url, "--log-level", "warning"])
            let before = try await Self.scrape(node)
            #expect(before.value("roomcast_sockets_connected", ["transport": "websocket"]) == 0)
            #expect(before.value("roomcast_events_received_total", ["event": "room:join"]) == 0)
            #expect(before.value("roomcast_frames_delivered_total") == 0)

            let alice = try await TwoNodeCluster.register("alice", on: node)
            let bob = try await TwoNodeCluster.register("bob", on: node)
            let room = try await Self.createRoom(by: alice, with: bob, on: node)
            let socket = try await SocketIOTestClient.connect(port: node.port, auth: #"{"token":"\#(alice.token)"}"#)
            _ = try await ElementSocketTests.join(socket, room)
            _ = try await ElementSocketTests.create(socket, room)
            _ = try await socket.nextEvent("element:created")
            let sent = try await socket.emitWithAck("message:send", ["roomId": .string(room), "text": "hello"])
            #expect(sent["data"].objectValue != nil, "\(sent)")
            _ = try await socket.nextEvent("message:new")
            let unknown = try await socket.emitWithAck("no:such-event", ["roomId": .string(room)])
            #expect(unknown["error"]["code"].stringValue == "unknown_event")
            let invalid = try await socket.emitWithAck("room:join", ["roomId": 5])
            #expect(invalid["error"]["code"].stringValue == "invalid_payload")
            // A CONNECT to a namespace the gateway does not serve: the reference's refusal, counted.
            do {
                try await socket.sendConnect(namespace: "/admin")
                Issue.record("a CONNECT to /admin was accepted")
            } catch SocketIOTestError.connectError(let message, let code) {
                #expect(message == "Invalid namespace" && code == nil)
            }
            let refused = try await HTTPTestClient.request(port: node.port, path: "/api/users/me", headers: ["Authorization": "Bearer nope"])
            #expect(refused.status == 401)
            // A method the path does not serve: counted under its own code, not `other`.
            let notAllowed = try await HTTPTestClient.request("DELETE", port: node.port, path: "/api/rooms/my-rooms", headers: ["Authorization": "Bearer \(alice.token)"])
            #expect(notAllowed.status == 405)
            // A binary event: refused as `binary_not_supported`, counted as such.
            try await socket.sendRaw(text: #"451-999["room:join",{"_placeholder":true,"num":0}]"#)
            try await socket.sendRaw(binary: ByteBuffer(bytes: [1, 2, 3]))
            let binary = try await socket.nextAck(999)
            #expect(binary.contains("binary_not_supported"), "\(binary)")

            let during = try await Self.scrape(node)
            #expect(during.value("roomcast_sockets_connected", ["transport": "websocket"]) == 1)
            #expect(during.value("roomcast_sockets_connected", ["transport": "polling"]) == 0)
            #expect(during.value("roomcast_channels_subscribed", ["kind": "room"]) == 1)
            // The node's own channel of per-user events for Alice's slot (her sockets' only one).
            #expect(during.value("roomcast_channels_subscribed", ["kind": "node"]) == 1)
            #expect(during.value("roomcast_events_received_total", ["event": "room:join"]) == 2)
            #expect(during.value("roomcast_events_received_total", ["event": "element:create"]) == 1)
            #expect(during.value("roomcast_events_received_total", ["event": "message:send"]) == 1)
            #expect(during.value("roomcast_events_received_total", ["event": "unknown"]) == 1)
            #expect(during.value("roomcast_rejected_inputs_total", ["code": "unknown_event", "source": "socket"]) == 1)
            #expect(during.value("roomcast_rejected_inputs_total", ["code": "invalid_payload", "source": "socket"]) == 1)
            #expect(during.value("roomcast_rejected_inputs_total", ["code": "invalid_namespace", "source": "socket"]) == 1)
            #expect(during.value("roomcast_rejected_inputs_total", ["code": "unauthorized", "source": "http"]) == 1)
            #expect(during.value("roomcast_rejected_inputs_total", ["code": "method_not_allowed", "source": "http"]) == 1)
            #expect(during.value("roomcast_rejected_inputs_total", ["code": "binary_not_supported", "source": "socket"]) == 1)
            #expect(during.sum("roomcast_rejected_inputs_total", matching: ["code": "other"]) == 0)
            // element:created, message:new and room:presence, each to Alice's one socket (at least).
            #expect(during.value("roomcast_frames_delivered_total") ?? 0 >= 2)
            #expect(during.value("roomcast_fanout_latency_seconds_count") ?? 0 >= 2)
            #expect(during.value("roomcast_redis_command_duration_seconds_count", ["command": "element_create"]) == 1)
            #expect(during.value("roomcast_redis_command_duration_seconds_count", ["command": "message_send"]) == 1)
            #expect(during.sum("roomcast_redis_command_errors_total") == 0)
            #expect(during.value("roomcast_pubsub_reconnects_total") == 0)
            #expect(during.value("roomcast_push_jobs_total", ["outcome": "delivered"]) == 0)
            #expect(during.value("roomcast_socket_connects_total") == 1)
            #expect(during.sum("roomcast_socket_disconnects_total") == 0)
            #expect(during.value("roomcast_build_info", ["version": RoomcastBuild.version]) == 1)
            #expect(during.value("roomcast_process_cpu_seconds_total") ?? 0 > 0)
            #expect(during.value("roomcast_process_resident_memory_bytes") ?? 0 > 1_000_000)
            #expect(during.value("roomcast_process_open_fds") ?? 0 >= 3)
            #expect(during.value("roomcast_process_max_fds") ?? 0 >= during.value("roomcast_process_open_fds") ?? .infinity)
            // Requests by route pattern and status: the refused token, and what no route serves.
            #expect(during.value("roomcast_http_requests_total", ["route": "/api/users/me", "status": "401"]) == 1, "\(during.families["roomcast_http_requests_total"].map { "\($0)" } ?? "none")")
            #expect(during.value("roomcast_http_requests_total", ["route": "NotFound", "status": "405"]) == 1)
            #expect(during.families["roomcast_http_requests_total"]?.type == "counter")

            // The pub/sub link drops: the node reconnects and fills the joined room's gap. On a
            // cluster, only the link to the room channel's shard, and only the channels on that
            // shard are repaired (Alice's events too if her slot is there).
            let killed = try await redis.server(servingKey: "room:{\(room)}:events")
            let userChannelThere = try await redis.server(servingKey: "user:{\(alice.id)}:events").port == killed.port
            try await withClient(try testConfiguration(killed)) { client in
                _ = try await client.send(RedisCommand("CLIENT", "KILL", "TYPE", "pubsub"))
            }
            var repaired = during
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                repaired = try await Self.scrape(node)
                if repaired.value("roomcast_gap_repairs_total") ?? 0 >= 1 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(repaired.value("roomcast_pubsub_reconnects_total") == 1)
            // The room's channel and Alice's user channel, each read back from its stream.
            let repairs = userChannelThere ? 2 : 1
            #expect(try await eventually(within: .seconds(10)) { try await Self.scrape(node).value("roomcast_gap_repairs_total") == Double(repairs) })

            _ = try await socket.close()
            var after = repaired
            while ContinuousClock.now < deadline + .seconds(30) {
                after = try await Self.scrape(node)
                if after.value("roomcast_sockets_connected", ["transport": "websocket"]) == 0 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(after.value("roomcast_sockets_connected", ["transport": "websocket"]) == 0)
            #expect(after.sum("roomcast_socket_disconnects_total") == 1)
            #expect(after.value("roomcast_socket_disconnects_total", ["reason": "other"]) == 0)
            #expect(after.value("roomcast_channels_subscribed", ["kind": "room"]) == 0)
            // Kept after her sockets left: the next user of that slot subscribes nothing.
            #expect(after.value("roomcast_channels_subscribed", ["kind": "node"]) == 1)
            // Counters never go back.
            for (name, family) in during.families where family.type == "counter" {
                for sample in family.samples {
                    #expect(after.value(sample.name, sample.labels) ?? -1 >= sample.value, "\(name) \(sample.labels)")
                }
            }
            await node.stop()
        }
    }

    @Test("/metrics needs no token and ignores a stray Authorization header")
    func outsideAuthentication() async throws {
        try await TestRedis.with { redis in
            let node = try await GatewayProcess(arguments: ["--redis-url", redis.url, "--log-level", "warning"])
            let response = try await HTTPTestClient.request(port: node.port, path: "/metrics", headers: ["Authorization": "Bearer garbage"])
            #expect(response.status == 200)
            _ = try PrometheusExposition(parsing: response.text)
            await node.stop()
        }
    }

    @Test("the strict parser refuses what Prometheus would refuse")
    func parserRefusals() throws {
        let good = """
            # HELP a_total Things.
            # TYPE a_total counter
            a_total{x="1"} 3
            a_total{x="q\\"uote\\\\"} 4
            # TYPE h_seconds histogram
            h_seconds_bucket{le="0.1"} 1
            h_seconds_bucket{le="+Inf"} 2
            h_seconds_sum 0.3
            h_seconds_count 2

            """
        let parsed = try PrometheusExposition(parsing: good)
        #expect(parsed.value("a_total", ["x": "q\"uote\\"]) == 4)
        #expect(parsed.value("h_seconds_count") == 2)
        let bad = [
            "a b",  // value not a number
            "1a 3",  // bad name
            "a{x=1} 3",  // unquoted label value
            "a{x=\"1\",x=\"2\"} 3",  // repeated label
            "a{x=\"\\q\"} 3",  // bad escape
            "# TYPE a counter\n# TYPE a counter\na 1",  // two TYPE lines
            "a 1\n# TYPE a counter",  // TYPE after samples
            "a 1\nb 1\na 2",  // samples not kept together
            "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1",  // not cumulative
            "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1",  // no +Inf
            "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 1",  // +Inf ≠ count
            "# TYPE h histogram\nh 1",  // a histogram sample that is not _bucket, _sum or _count
            "# TYPE h histogram\nh_bucket 1\nh_sum 1\nh_count 1",  // a bucket without le
        ]
        for text in bad {
            #expect(throws: PrometheusExpositionError.self, "\(text)") { _ = try PrometheusExposition(parsing: text) }
        }
    }

    /// Creates a room of two over REST and returns its id.
    static func createRoom(by creator: TestUser, with other: TestUser, on node: GatewayProcess) async throws -> String {
        let response = try await HTTPTestClient.request(
            "POST", port: node.port, path: "/api/rooms",
            headers: ["Content-Type": "application/json", "Authorization": "Bearer \(creator.token)"],
            body: Data(#"{"otherUserId":"\#(other.id)"}"#.utf8)
        )
        #expect(response.status == 201, "create room: \(response.text)")
        return try #require(try JSONValue(response.text)["data"]["id"].stringValue)
    }
}
