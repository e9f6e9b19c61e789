public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A minimal blocking HTTP/1.1 client for tests (one request per connection, `Connection: close`).
///
/// Tests drive the gateway from outside, as a user would; this avoids a client library
/// dependency for a handful of requests.
public enum HTTPTestClient {
    /// A response: status code, lower-cased header names, body bytes.
    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: Data
        /// The body as UTF-8 text.
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends one request to `127.0.0.1:port` and reads the whole response.
    public static func request(
        _ method: String = "GET",
        port: Int,
        path: String,
        headers: [String: String] = [:],
        body: Data? = nil
    ) async throws -> Response {
        try await Task.detached {
            try perform(method: method, port: port, path: path, headers: headers, body: body)
        }.value
    }

    private static func perform(method: String, port: Int, path: String, headers: [String: String], body: Data?) throws -> Response {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HTTPTestError("socket() failed") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw HTTPTestError("cannot connect to 127.0.0.1:\(port)") }

        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        var request = Data(head.utf8)
        if let body { request.append(body) }
        try request.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                guard written > 0 else { throw HTTPTestError("write failed") }
                offset += written
            }
        }

        var received = Data()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count <= 0 { break }
            received.append(contentsOf: chunk[0..<count])
        }
        return try parse(received)
    }

    private static func parse(_ data: Data) throws -> Response {
        guard let separator = data.range(of: Data("\r\n\r\n".utf8)) else { throw HTTPTestError("no HTTP head in response") }
        let head = String(decoding: data[..<separator.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        guard let statusLine = head.first, statusLine.split(separator: " ").count >= 2,
            let status = Int(statusLine.split(separator: " ")[1])
        else { throw HTTPTestError("bad status line") }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Data(data[separator.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = try dechunk(body) }
        return Response(status: status, headers: headers, body: body)
    }

    private static func dechunk(_ data: Data) throws -> Data {
        var result = Data()
        var rest = data[...]
        while let lineEnd = rest.range(of: Data("\r\n".utf8)) {
            let sizeText = String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText, radix: 16) else { throw HTTPTestError("bad chunk size") }
            if size == 0 { break }
            let start = lineEnd.upperBound
            result.append(rest[start..<(start + size)])
            rest = rest[(start + size + 2)...]
        }
        return result
    }
}

/// A test HTTP request that failed below HTTP.
public struct HTTPTestError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
