import Hummingbird
import RoomcastCore

/// The `?cursor=&limit=` of a paged list. An empty value counts as absent.
struct PageRequest {
    /// The page size when none is asked for.
    static let defaultLimit = 50
    /// The allowed page sizes.
    static let limits = 1...100

    /// The cursor text as the client sent it; `nil` for the first page.
    var cursor: String?
    /// The page size.
    var limit: Int

    /// Reads and checks the query of `request`.
    /// - Throws: `invalid_payload` for a `limit` that is not a whole number in ``limits``.
    init(_ request: Request) throws(RoomcastError) {
        let query = request.uri.queryParameters
        cursor = query.get("cursor").flatMap { $0.isEmpty ? nil : $0 }
        guard let text = query.get("limit"), !text.isEmpty else {
            limit = Self.defaultLimit
            return
        }
        guard let limit = Int(text), Self.limits.contains(limit) else {
            throw RoomcastError(.invalidPayload, "limit must be a whole number from \(Self.limits.lowerBound) to \(Self.limits.upperBound)")
        }
        self.limit = limit
    }
}
