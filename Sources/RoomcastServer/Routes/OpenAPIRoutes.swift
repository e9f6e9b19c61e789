import Foundation
import Hummingbird
import NIOCore
import RoomcastCore

/// `GET /api/openapi.json`: the REST API's contract as an OpenAPI 3.1 document, public like the
/// console (no token needed; a bad one is not even looked at).
///
/// The document is `Sources/RoomcastServer/OpenAPI/openapi.json`, a resource of this target, read
/// once when the routes are built and served as it is. `OpenAPIDocumentTests` checks that it
/// names every route the router has and no other; `scripts/schemathesis.sh` checks the node's
/// answers against it.
struct OpenAPIRoutes {
    /// The request path.
    static let path = "/api/openapi.json"

    /// The document's bytes; `nil` when the resource bundle lacks it (then the route answers 404).
    let document: ByteBuffer?

    /// Reads the document from the resource bundle.
    init() {
        document = Self.documentBytes().map { ByteBuffer(bytes: $0) }
    }

    /// The document as shipped in the resource bundle.
    static func documentBytes() -> Data? {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json", subdirectory: "OpenAPI") else { return nil }
        return try? Data(contentsOf: url)
    }

    func register(on router: Router<some RequestContext>) {
        router.get(RouterPath(Self.path)) { _, _ throws(RoomcastError) in
            guard let document else {
                throw RoomcastError(.notFound, "the OpenAPI document is missing from this node's resource bundle")
            }
            return Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-cache"], body: ResponseBody(byteBuffer: document)
            )
        }
    }
}
