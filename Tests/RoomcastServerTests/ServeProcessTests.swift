import Foundation
import RoomcastServer
import RoomcastTestSupport
import Testing

@Suite("roomcast serve, run as a process")
struct ServeProcessTests {
    @Test("prints a ready line, serves /healthz and /readyz following Redis, exits cleanly on SIGTERM")
    func lifecycle() async throws {
        try await TestRedis.with { redis in
            // A drain timeout of an hour: a shutdown that waited it out instead of ending once no
            // socket is left would outlast the wait for the exit below by far.
            let gateway = try await GatewayProcess(
                arguments: ["--redis-url", redis.url, "--log-level", "warning"],
                environment: ["ROOMCAST_SHUTDOWN_DRAIN_TIMEOUT_MS": "3600000"]
            )
            let health = try await HTTPTestClient.request(port: gateway.port, path: "/healthz")
            #expect(health.status == 200)
            #expect(health.text.contains("\"ok\""))
            #expect(try await HTTPTestClient.request(port: gateway.port, path: "/readyz").status == 200)

            await redis.stop()
            #expect(try await HTTPTestClient.request(port: gateway.port, path: "/readyz").status == 503)
            #expect(try await HTTPTestClient.request(port: gateway.port, path: "/healthz").status == 200)

            try await redis.start()
            #expect(try await eventually(within: .seconds(30)) {
                try await HTTPTestClient.request(port: gateway.port, path: "/readyz").status == 200
            })

            gateway.process.signal(SIGTERM)
            // SIGKILLed, and so not 0, if it is still running after five minutes.
            let status = await gateway.process.exitStatus(timeout: .seconds(300))
            #expect(status == 0, "output:\n\(gateway.output)")
            try? FileManager.default.removeItem(atPath: gateway.logPath)
        }
    }

    @Test("an invalid setting stops start-up with a message naming it")
    func invalidSettingStopsStartup() async throws {
        let (status, output) = try await GatewayProcess.runToExit(arguments: ["serve"], environment: ["ROOMCAST_PORT": "eighty"])
        #expect(status != 0)
        #expect(output.contains("port"))
        #expect(output.contains("ROOMCAST_PORT"))
        #expect(!output.contains("roomcast ready"))
    }

    @Test("an https advertise URL stops start-up, naming the setting and why")
    func httpsAdvertiseURLStopsStartup() async throws {
        let (status, output) = try await GatewayProcess.runToExit(
            arguments: ["serve"], environment: ["ROOMCAST_NODE_ADVERTISE_URL": "https://gw-1.internal:8443"]
        )
        #expect(status != 0)
        #expect(output.contains("node.advertise_url"), "\(output)")
        #expect(output.contains("plain HTTP"), "\(output)")
        #expect(!output.contains("roomcast ready"))
    }

    @Test("roomcast --version prints the build's version, the one roomcast_build_info exports")
    func version() async throws {
        let (status, output) = try await GatewayProcess.runToExit(arguments: ["--version"])
        #expect(status == 0)
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == RoomcastBuild.version)
    }
}

@Suite("roomcast serve: routes outside the API")
struct PublicRouteTests {
    @Test("health probes ignore a stray Authorization header; the API does not")
    func healthIgnoresAuthorization() async throws {
        try await TestRedis.with { redis in
            // A drain timeout of an hour: a shutdown that waited it out instead of ending once no
            // socket is left would outlast the wait for the exit below by far.
            let gateway = try await GatewayProcess(
                arguments: ["--redis-url", redis.url, "--log-level", "warning"],
                environment: ["ROOMCAST_SHUTDOWN_DRAIN_TIMEOUT_MS": "3600000"]
            )
            defer { gateway.process.signal(SIGKILL) }
            let health = try await HTTPTestClient.request(port: gateway.port, path: "/healthz", headers: ["Authorization": "Bearer nonsense"])
            #expect(health.status == 200)
            let me = try await HTTPTestClient.request(port: gateway.port, path: "/api/users/me", headers: ["Authorization": "Bearer nonsense"])
            #expect(me.status == 401)
            #expect(try JSONValue(me.text)["error"]["code"] == "unauthorized")
            let unknown = try await HTTPTestClient.request(port: gateway.port, path: "/api/nothing-here")
            #expect(unknown.status == 404)
            #expect(try JSONValue(unknown.text)["error"]["code"] == "not_found")
            await gateway.stop()
        }
    }
}
