public import Foundation

/// A certificate authority made with `openssl` for one test, and the certificates it signs: the
/// TLS tests' servers and clients, with no file checked in to expire.
///
/// Keys are P-256; certificates carry no extended key usage, so one serves a Redis node both as a
/// server and as a client of its peers (`tls-cluster`, `tls-replication`).
public struct TestCertificateAuthority: Sendable {
    /// The authority's certificate (PEM): the CA file a client or server trusts.
    public let certificateFile: String
    private let keyFile: String
    private let directory: URL
    private let name: String

    /// A fresh authority named `name`, its files in `directory`.
    public init(name: String, in directory: URL) async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        self.name = name
        certificateFile = directory.appendingPathComponent("\(name).crt").path
        keyFile = directory.appendingPathComponent("\(name).key").path
        try await Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", keyFile, "-out", certificateFile,
            "-days", "2", "-subj", "/CN=\(name)", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
    }

    /// Issues a certificate for the names and addresses a server answers to (or a client's
    /// identity), signed by this authority.
    /// - Parameters:
    ///   - name: the certificate's file name and common name.
    ///   - dnsNames: `subjectAltName` DNS entries.
    ///   - addresses: `subjectAltName` IP entries.
    public func issue(_ name: String, dnsNames: [String] = [], addresses: [String] = []) async throws -> TestCertificate {
        let base = directory.appendingPathComponent("\(self.name)-\(name)")
        let certificate = TestCertificate(certificateFile: base.path + ".crt", keyFile: base.path + ".key", authority: certificateFile)
        let request = base.path + ".csr"
        let extensions = base.path + ".ext"
        let alternativeNames = (dnsNames.map { "DNS:\($0)" } + addresses.map { "IP:\($0)" }).joined(separator: ",")
        var lines = ["basicConstraints=CA:FALSE", "keyUsage=critical,digitalSignature"]
        if !alternativeNames.isEmpty { lines.append("subjectAltName=\(alternativeNames)") }
        try (lines.joined(separator: "\n") + "\n").write(toFile: extensions, atomically: true, encoding: .utf8)
        try await Self.openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", certificate.keyFile, "-out", request,
            "-subj", "/CN=\(name)",
        ])
        try await Self.openssl([
            "x509", "-req", "-in", request, "-CA", certificateFile, "-CAkey", keyFile, "-set_serial", "\(UInt64.random(in: 1...UInt64(Int64.max)))",
            "-out", certificate.certificateFile, "-days", "2", "-extfile", extensions,
        ])
        return certificate
    }

    /// Runs `openssl`; throws with its output when it fails.
    private static func openssl(_ arguments: [String]) async throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-test-openssl.\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = try ChildProcess(executable: try executable(), arguments: arguments, outputPath: output.path)
        let status = await process.exitStatus(timeout: .seconds(60))
        guard status == 0 else {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            throw RedisServerError("openssl \(arguments.prefix(2).joined(separator: " ")) exited with \(status): \(text)")
        }
    }

    private static func executable() throws -> String {
        for candidate in ["/usr/bin/openssl", "/usr/local/bin/openssl", "/bin/openssl"] where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw RedisServerError("openssl not found: install it (apt-get install openssl; scripts/setup.sh does)")
    }
}

/// A certificate and its key (PEM files), and the authority that signed it.
public struct TestCertificate: Sendable, Hashable {
    /// The certificate.
    public let certificateFile: String
    /// Its private key.
    public let keyFile: String
    /// The signing authority's certificate.
    public let authority: String
}

/// What a TLS test needs, in a directory of its own: an authority, a server certificate for
/// `127.0.0.1` and `localhost`, and a client certificate, all signed by it.
public struct TestTLSFiles: Sendable {
    /// Where the files are; more authorities and certificates may be made there.
    public let directory: URL
    /// The authority servers and clients trust.
    public let authority: TestCertificateAuthority
    /// A server's certificate, for `127.0.0.1` and `localhost`.
    public let server: TestCertificate
    /// A client's certificate.
    public let client: TestCertificate

    /// Makes the files, runs `body`, removes them whatever happened.
    public static func with<Result>(_ body: (TestTLSFiles) async throws -> Result) async throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-test-redis.tls-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let authority = try await TestCertificateAuthority(name: "roomcast-test-ca", in: directory)
        let files = TestTLSFiles(
            directory: directory, authority: authority,
            server: try await authority.issue("server", dnsNames: ["localhost"], addresses: ["127.0.0.1"]),
            client: try await authority.issue("client")
        )
        return try await body(files)
    }
}
