import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RoomcastCore

/// `GET /console` and its two assets: the live room console, a static page (HTML, CSS and plain
/// JavaScript, no build step, nothing fetched from elsewhere) that is an ordinary client of the
/// public REST API and of the Socket.IO endpoint. It needs no route of its own beyond its files.
///
/// The files ship as resources of this target (`Sources/RoomcastServer/Console`) and are read
/// once, when the routes are built; each answer carries an `ETag`, so a browser revalidates
/// (`Cache-Control: no-cache`) and gets a bodiless 304 while the node serves the same files.
/// Register on the router itself, outside the API group: the page is public, its API calls
/// carry the user's token.
struct ConsoleRoutes {
    /// One file of the console, ready to send.
    struct Asset: Sendable {
        var body: ByteBuffer
        var contentType: String
        var etag: String
    }

    /// Request path → file in the `Console` resource folder, and its content type.
    static let files: [(path: String, file: String, contentType: String)] = [
        ("/console", "index.html", "text/html; charset=utf-8"),
        ("/console/console.css", "console.css", "text/css; charset=utf-8"),
        ("/console/console.js", "console.js", "text/javascript; charset=utf-8"),
    ]

    /// The page may load only its own files and talk only to this node; photos may come from anywhere.
    static let contentSecurityPolicy =
        "default-src 'self'; connect-src 'self'; img-src 'self' data: http: https:; media-src 'self' http: https:; "
        + "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

    /// The files by request path; a file missing from the bundle is left out and answers 404.
    let assets: [String: Asset]

    /// Reads the console's files from the resource bundle.
    init() {
        var assets: [String: Asset] = [:]
        for entry in Self.files {
            let name = (entry.file as NSString).deletingPathExtension
            let type = (entry.file as NSString).pathExtension
            guard let url = Bundle.module.url(forResource: name, withExtension: type, subdirectory: "Console"),
                let bytes = try? Data(contentsOf: url)
            else { continue }
            let digest = SHA256.hash(data: bytes).prefix(12).map { String(format: "%02x", $0) }.joined()
            assets[entry.path] = Asset(body: ByteBuffer(bytes: bytes), contentType: entry.contentType, etag: "\"\(digest)\"")
        }
        self.assets = assets
    }

    func register(on router: Router<some RequestContext>) {
        // Hummingbird matches `/console/` with `/console` too.
        for path in Self.files.map(\.path) {
            router.get(RouterPath(path)) { request, _ in try response(for: path, request: request) }
        }
    }

    /// The file, or a 304 when the browser's copy is current.
    private func response(for path: String, request: Request) throws(RoomcastError) -> Response {
        guard let asset = assets[path] else {
            throw RoomcastError(.notFound, "the console's files are missing from this node's resource bundle")
        }
        var headers: HTTPFields = [
            .cacheControl: "no-cache",
            .eTag: asset.etag,
            HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        ]
        if path == "/console" {
            headers[HTTPField.Name("Content-Security-Policy")!] = Self.contentSecurityPolicy
            headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        }
        if let tags = request.headers[.ifNoneMatch], tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == asset.etag }) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = asset.contentType
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: asset.body))
    }
}
