import Logging
import RedisClient
import RoomcastCore
import ServiceLifecycle

/// Loads the Roomcast library of Redis Functions on every master as soon as Redis answers, so the
/// node's first calls do not each find it missing, and a Lua error shows at start-up. A master
/// that lacks it later (added to a cluster, restarted without its data) is given it by the call
/// that finds it missing (``RedisClientProtocol/call(_:timeout:durability:)``).
final class FunctionLibraryLoader: Service {
    private let redis: any RedisClientProtocol
    private let logger: Logger

    init(redis: any RedisClientProtocol, logger: Logger) {
        self.redis = redis
        self.logger = logger
    }

    func run() async throws {
        let library = RoomcastLibrary.library
        await cancelWhenGracefulShutdown {
            var pause = Duration.milliseconds(100)
            while !Task.isCancelled {
                do throws(RedisError) {
                    try await self.redis.load(library)
                    self.logger.info("Redis function library loaded", metadata: ["library": "\(library.name)"])
                    return
                } catch where error.code == .reply {
                    // Redis answered and refused it: a Lua error, or a user not allowed FUNCTION.
                    self.logger.error("Redis refused the function library", metadata: ["library": "\(library.name)", "error": "\(error)"])
                } catch {
                    self.logger.debug("Redis function library not loaded yet, retrying", metadata: ["library": "\(library.name)", "error": "\(error)"])
                }
                guard (try? await Task.sleep(for: pause)) != nil else { return }
                pause = min(pause * 2, .seconds(5))
            }
        }
        // A service that returns would end the node: this one waits for the shutdown.
        try? await gracefulShutdown()
    }
}
