import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// TLS for every connection a client makes (a cluster's masters, slot map reads and the
/// subscriber's links included): which authorities sign the servers' certificates, the name those
/// certificates must carry, and the certificate the client shows when the server asks for one.
///
/// The files are read, and the TLS context built, once, here: a missing file or a key that does
/// not match its certificate fails at start-up, not at every connection.
public struct RedisTLS: Sendable {
    /// PEM file (or directory) of the certificate authorities trusted to sign the servers'
    /// certificates; `nil`: the system's trust store.
    public let caFile: String?
    /// PEM file of the client's certificate chain, shown to a server that asks for one
    /// (`tls-auth-clients yes`); `nil`: none.
    public let certificateFile: String?
    /// PEM file of the private key of ``certificateFile``.
    public let privateKeyFile: String?
    /// The name every server's certificate must carry, sent as the TLS server name (SNI), instead
    /// of the host connected to. For a cluster whose nodes are announced by address while their
    /// certificates name the service. `nil`: the host itself (a name, or an address checked
    /// against the certificate's IP entries).
    public let serverName: String?
    /// Built once from the settings above; shared by every connection.
    let context: NIOSSLContext

    /// Reads the files and builds the TLS context.
    /// - Throws: ``RedisError/Code/invalidConfiguration`` naming the file that could not be used.
    public init(caFile: String? = nil, certificateFile: String? = nil, privateKeyFile: String? = nil, serverName: String? = nil) throws(RedisError) {
        func invalid(_ why: String, _ error: (any Error)? = nil) -> RedisError {
            RedisError(.invalidConfiguration, "Redis TLS: \(why)", underlying: error)
        }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .fullVerification
        // What Redis itself offers by default (`tls-protocols "TLSv1.2 TLSv1.3"`).
        configuration.minimumTLSVersion = .tlsv12
        if let caFile {
            try Self.checkReadable(caFile, "CA file")
            do {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
            } catch {
                throw invalid("no PEM certificate in CA file '\(caFile)'", error)
            }
        }
        switch (certificateFile, privateKeyFile) {
        case (nil, nil):
            break
        case (let certificateFile?, let privateKeyFile?):
            try Self.checkReadable(certificateFile, "client certificate file")
            try Self.checkReadable(privateKeyFile, "client key file")
            do {
                configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) }
            } catch {
                throw invalid("no PEM certificate in client certificate file '\(certificateFile)'", error)
            }
            do {
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: privateKeyFile, format: .pem))
            } catch {
                throw invalid("no PEM private key in client key file '\(privateKeyFile)'", error)
            }
        case (nil, _?):
            throw invalid("a client key needs its certificate")
        case (_?, nil):
            throw invalid("a client certificate needs its private key")
        }
        if let serverName {
            guard !serverName.isEmpty, !RedisTLS.isAddress(serverName) else {
                throw invalid("the server name '\(serverName)' must be a DNS name; to check an address, connect to it and leave the server name unset")
            }
        }
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            // BoringSSL checks here that the key belongs to the certificate.
            throw invalid("cannot set up TLS with these files (does the key belong to the certificate?): \(error)", error)
        }
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.serverName = serverName
    }

    /// The name a connection to `host` sends (SNI) and checks the certificate against: the
    /// override, else the host when it is a name. An address is never sent as SNI; the
    /// certificate is then checked against the address connected to.
    func serverHostname(for host: String) -> String? {
        serverName ?? (Self.isAddress(host) ? nil : host)
    }

    /// An IPv4 or IPv6 literal rather than a name.
    static func isAddress(_ host: String) -> Bool {
        host.contains(":") || (!host.isEmpty && host.allSatisfy { $0.isNumber || $0 == "." })
    }

    private static func checkReadable(_ path: String, _ what: String) throws(RedisError) {
        guard access(path, R_OK) == 0 else {
            let reason = String(cString: strerror(errno))
            throw RedisError(.invalidConfiguration, "Redis TLS: cannot read the \(what) '\(path)': \(reason)")
        }
    }
}
