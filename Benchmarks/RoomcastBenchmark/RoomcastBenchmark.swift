import Foundation
import NIOCore
import NIOPosix

/// `roomcast-bench`: end-to-end load on gateway nodes over loopback, one scenario per run.
///
///     roomcast-bench SCENARIO --gateway URL [--gateway URL] [--redis-url URL] [--pids P,P] [options]
///
/// Scenarios: `canvas` (drag moves in two-person rooms), `chat` (fan-out in big rooms),
/// `preview` (volatile `element:drag` fan-out), `idle`
/// (memory per held connection), `connect` (connect + JWT auth rate). Each prints one JSON line,
/// then a human summary. `--pids` gives the gateways' process ids, in `--gateway` order, for CPU
/// and memory figures read from `/proc`.
@main
struct RoomcastBenchmark {
    static func main() {
        // Tasks run on NIO's event loops, as in `roomcast` (installed before the first task):
        // under a saturating load, libdispatch's worker pool on Linux has crashed the load
        // generator (SIGILL in `_dispatch_workq_monitor_pools`, its check of a worker's
        // /proc/<tid>/stat). Twice as many loops as cores: the threads the generator had before,
        // a cooperative pool and the loops, so its capacity and the figures stay comparable.
        NIOSingletons.groupLoopCountSuggestion = 2 * System.coreCount
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        Task {
            do {
                try await run()
                exit(0)
            } catch {
                print("roomcast-bench: \(error)")
                exit(1)
            }
        }
        dispatchMain()
    }

    static func run() async throws {
        let options = Options(CommandLine.arguments.dropFirst())
        guard !options.gateways.isEmpty, let scenario = Scenario(rawValue: options.scenario) else {
            print("""
                usage: roomcast-bench canvas|chat|preview|idle|connect --gateway URL [--gateway URL] [--redis-url URL] [--pids P,P]
                         [--rooms N] [--members N] [--rate R] [--seconds S] [--connections N] [--concurrency N] [--sockets-per-user N]
                """)
            return
        }
        let context = BenchContext(options: options)
        let report: BenchReport
        switch scenario {
        case .canvas: report = try await CanvasDrag.run(context)
        case .chat: report = try await ChatFanout.run(context)
        case .preview: report = try await DragPreviews.run(context)
        case .idle: report = try await IdleConnections.run(context)
        case .connect: report = try await ConnectRate.run(context)
        }
        report.print()
    }
}

enum Scenario: String {
    case canvas, chat, preview, idle, connect
}

struct Options: Sendable {
    var scenario = "canvas"
    var gateways: [String] = []
    var redisURL = "redis://127.0.0.1:6379"
    var rooms = 1000
    var members = 100
    var rate = 5.0
    var seconds = 10
    var connections = 1000
    var concurrency = 100
    var socketsPerUser = 500
    var pids: [Int32] = []

    init(_ arguments: ArraySlice<String>) {
        var arguments = arguments
        if let first = arguments.first, !first.hasPrefix("--") {
            scenario = first
            arguments = arguments.dropFirst()
        }
        // Each scenario's defaults are the README's command for it.
        switch scenario {
        case "chat": (rooms, members, rate) = (10, 100, 20)
        case "preview": (rooms, members, rate) = (120, 10, 25)
        case "idle": connections = 19_000
        case "connect": connections = 5_000
        default: break
        }
        var iterator = arguments.makeIterator()
        while let flag = iterator.next() {
            let value = iterator.next() ?? ""
            switch flag {
            case "--gateway": gateways.append(value)
            case "--redis-url": redisURL = value
            case "--rooms": rooms = Int(value) ?? rooms
            case "--members": members = Int(value) ?? members
            case "--rate": rate = Double(value) ?? rate
            case "--seconds": seconds = Int(value) ?? seconds
            case "--connections": connections = Int(value) ?? connections
            case "--concurrency": concurrency = Int(value) ?? concurrency
            case "--sockets-per-user": socketsPerUser = Int(value) ?? socketsPerUser
            case "--pids": pids = value.split(separator: ",").compactMap { Int32($0) }
            default: print("unknown option \(flag)")
            }
        }
    }
}
