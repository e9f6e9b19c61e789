import Logging
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing


/// Expects `body` to fail with a ``RoomcastError`` of `code`.
func expectRoomcastError<Value>(
    _ code: RoomcastError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Value
) async {
    do {
        _ = try await body()
        Issue.record("expected \(code), but the call succeeded", sourceLocation: sourceLocation)
    } catch let error as RoomcastError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected RoomcastError \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

