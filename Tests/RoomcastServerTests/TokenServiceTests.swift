import Foundation
import JWTKit
import RoomcastCore
@testable import RoomcastServer
import Testing

@Suite("TokenService: HS256 tokens")
struct TokenServiceTests {
    static let secret = "roomcast-test-secret-0123456789-abcdef"
    let service = TokenService(secret: Self.secret, lifetime: .seconds(3600))
    let alice = UserID("alice")!

    @Test("an issued token verifies to its user")
    func roundTrip() async throws {
        let token = try await service.issue(for: alice)
        #expect(try service.verify(token) == alice)
    }

    @Test("the payload holds sub, and iat and exp in whole seconds a lifetime apart")
    func claims() async throws {
        let now = Date(timeIntervalSince1970: 1_700_000_000.75)
        let token = try await service.issue(for: alice, now: now)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        let header = try #require(try JSONSerialization.jsonObject(with: base64URLDecoded(parts[0])) as? [String: Any])
        #expect(header["alg"] as? String == "HS256")
        let payload = try #require(try JSONSerialization.jsonObject(with: base64URLDecoded(parts[1])) as? [String: Any])
        #expect(payload["sub"] as? String == "alice")
        let text = String(decoding: base64URLDecoded(parts[1]), as: UTF8.self)
        #expect(text.contains("\"iat\":1700000000"))
        #expect(text.contains("\"exp\":1700003600"))
        #expect(!text.contains("1700000000."))
    }

    @Test("a token is expired from its exp second on")
    func expiryBoundary() async throws {
        let issued = Date(timeIntervalSince1970: 1_700_000_000)
        let token = try await service.issue(for: alice, now: issued)
        #expect(try service.verify(token, now: issued.addingTimeInterval(3599)) == alice)
        await expectError(.tokenExpired) { try service.verify(token, now: issued.addingTimeInterval(3600)) }
    }

    @Test("an old token is token_expired")
    func expired() async throws {
        let token = try await service.issue(for: alice, now: .now.addingTimeInterval(-7200))
        await expectError(.tokenExpired) { try service.verify(token) }
    }

    @Test("a changed signature or payload is unauthorized")
    func tampered() async throws {
        let token = try await service.issue(for: alice)
        var parts = token.split(separator: ".").map(String.init)
        // Change the signature's first character: unlike the last one, all its bits count.
        let signature = parts[2]
        parts[2] = (signature.first == "A" ? "B" : "A") + signature.dropFirst()
        await expectError(.unauthorized) { try service.verify(parts.joined(separator: ".")) }

        let mallory = try await service.issue(for: UserID("mallory")!)
        let forged = [mallory.split(separator: ".")[0], mallory.split(separator: ".")[1], token.split(separator: ".")[2]]
        await expectError(.unauthorized) { try service.verify(forged.joined(separator: ".")) }
    }

    @Test("an unsigned alg:none token is unauthorized")
    func algNone() async throws {
        let header = base64URL(#"{"alg":"none","typ":"JWT"}"#)
        let exp = Int(Date.now.timeIntervalSince1970) + 3600
        let payload = base64URL(#"{"sub":"alice","exp":\#(exp)}"#)
        await expectError(.unauthorized) { try service.verify("\(header).\(payload).") }
        await expectError(.unauthorized) { try service.verify("\(header).\(payload)") }
    }

    @Test("a header naming another algorithm is refused even with a valid HS256 signature")
    func otherAlgorithmHeader() async throws {
        for alg in ["none", "HS512", "RS256"] {
            let token = try await sign(ExternalClaims(sub: "alice", exp: .now + 3600), header: ["alg": .string(alg)])
            await expectError(.unauthorized) { try service.verify(token) }
        }
    }

    @Test("nbf is honoured: a token not valid yet is unauthorized, then accepted")
    func notBefore() async throws {
        let now = Int(Date.now.timeIntervalSince1970)
        let token = try await signRaw(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"alice","exp":\#(now + 3600),"nbf":\#(now + 60)}"#)
        await expectError(.unauthorized) { try service.verify(token) }
        #expect(try service.verify(token, now: Date(timeIntervalSince1970: Double(now + 61))) == alice)
    }

    @Test("a crit header is refused: no extension is understood here")
    func critical() async throws {
        let exp = Int(Date.now.timeIntervalSince1970) + 3600
        for crit in [#"["b64"]"#, #"["exp"]"#, "[]"] {
            let token = try await signRaw(header: #"{"alg":"HS256","typ":"JWT","crit":\#(crit)}"#, payload: #"{"sub":"alice","exp":\#(exp)}"#)
            await expectError(.unauthorized) { try service.verify(token) }
        }
    }

    @Test("the verified token tells its expiry")
    func expiry() async throws {
        let issued = Date(timeIntervalSince1970: 1_800_000_000)
        let token = try await service.issue(for: alice, now: issued)
        let verified = try service.verifyToken(token, now: issued)
        #expect(verified.user == alice && verified.expires == issued.addingTimeInterval(3600))
    }

    @Test("a token signed with another key is unauthorized")
    func otherKey() async throws {
        let other = TokenService(secret: String(repeating: "x", count: 32), lifetime: .seconds(3600))
        let token = try await other.issue(for: alice)
        await expectError(.unauthorized) { try service.verify(token) }
    }

    @Test("a token from an external issuer with only sub and exp is accepted")
    func externalIssuer() async throws {
        let token = try await sign(ExternalClaims(sub: "alice", exp: .now + 3600, iss: "https://id.example"))
        #expect(try service.verify(token) == alice)
    }

    @Test("a sub that is not a user id, or a missing sub or exp, is unauthorized", arguments: [
        #"{"sub":"not an id!","exp":EXP}"#,
        #"{"sub":"","exp":EXP}"#,
        #"{"sub":42,"exp":EXP}"#,
        #"{"exp":EXP}"#,
        #"{"sub":"alice"}"#,
        #"{"sub":"alice","exp":"tomorrow"}"#,
    ])
    func invalidClaims(payload: String) async throws {
        let exp = Int(Date.now.timeIntervalSince1970) + 3600
        let json = payload.replacingOccurrences(of: "EXP", with: "\(exp)")
        let token = try await signRaw(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: json)
        await expectError(.unauthorized) { try service.verify(token) }
    }

    @Test("a header or payload naming a member twice is unauthorized: parsers differ on which counts")
    func duplicateMembers() async throws {
        let exp = Int(Date.now.timeIntervalSince1970) + 3600
        let twoSubjects = try await signRaw(header: #"{"alg":"HS256"}"#, payload: #"{"sub":"mallory","sub":"alice","exp":\#(exp)}"#)
        await expectError(.unauthorized) { try service.verify(twoSubjects) }
        let twoAlgorithms = try await signRaw(header: #"{"alg":"none","\u0061lg":"HS256"}"#, payload: #"{"sub":"alice","exp":\#(exp)}"#)
        await expectError(.unauthorized) { try service.verify(twoAlgorithms) }
    }

    @Test("iat and nbf may be null; a fractional exp counts to the fraction")
    func optionalClaims() async throws {
        let exp = Date.now.timeIntervalSince1970 + 3600.5
        let token = try await signRaw(header: #"{"typ":"JWT","alg":"HS256"}"#, payload: #"{"exp":\#(exp),"iat":null,"nbf":null,"sub":"alice","extra":{"sub":"mallory"}}"#)
        let verified = try service.verifyToken(token)
        #expect(verified.user == alice && verified.expires.timeIntervalSince1970 == exp)
        let badIssuedAt = try await signRaw(header: #"{"alg":"HS256"}"#, payload: #"{"sub":"alice","exp":\#(exp),"iat":"yesterday"}"#)
        await expectError(.unauthorized) { try service.verify(badIssuedAt) }
    }

    @Test("a signature that is not exactly base64url of 32 bytes is unauthorized")
    func signatureEncoding() async throws {
        let token = try await service.issue(for: alice)
        let parts = token.split(separator: ".").map(String.init)
        for signature in [parts[2] + "A", String(parts[2].dropLast()), parts[2].replacingOccurrences(of: "-", with: "+") + "+/", parts[2] + "=", ""] {
            await expectError(.unauthorized) { try service.verify("\(parts[0]).\(parts[1]).\(signature)") }
        }
        // A padded header is not base64url either.
        await expectError(.unauthorized) { try service.verify("\(parts[0])=.\(parts[1]).\(parts[2])") }
    }

    @Test("the raw signing helper makes tokens the service accepts")
    func rawHelperSanity() async throws {
        let exp = Int(Date.now.timeIntervalSince1970) + 3600
        let token = try await signRaw(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"alice","exp":\#(exp)}"#)
        #expect(try service.verify(token) == alice)
    }

    @Test("garbage is unauthorized", arguments: [
        "", "garbage", "a.b", "a.b.c", "..", "...", "a.b.c.d", "eyJ.eyJ.", "🙂.🙂.🙂",
        String(repeating: "a", count: 10_000) + ".b.c",
    ])
    func garbage(token: String) async {
        await expectError(.unauthorized) { try service.verify(token) }
    }

    @Test("a secret shorter than 32 bytes is refused, naming jwt.secret")
    func secretLength() throws {
        #expect(throws: Never.self) { try TokenService.validate(secret: String(repeating: "s", count: 32)) }
        // 11 characters, 33 bytes: the length is counted in bytes.
        #expect(throws: Never.self) { try TokenService.validate(secret: String(repeating: "€", count: 11)) }
        let error = #expect(throws: ConfigurationError.self) { try TokenService.validate(secret: String(repeating: "s", count: 31)) }
        #expect(error?.key == "jwt.secret")
        #expect(throws: ConfigurationError.self) { try TokenService.validate(secret: "") }
    }

    // MARK: Helpers

    /// Claims as another issuer might send them.
    struct ExternalClaims: JWTPayload {
        var sub: String
        var exp: Date
        var iss: String?

        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// Signs `payload` with the test secret through jwt-kit, with `header` as given.
    private func sign(_ payload: some JWTPayload, header: JWTHeader = JWTHeader()) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Self.secret), digestAlgorithm: .sha256)
        return try await keys.sign(payload, header: header)
    }

    /// Builds an HS256 token from raw JSON texts, signed with the test secret.
    private func signRaw(header: String, payload: String) async throws -> String {
        let signingInput = base64URL(header) + "." + base64URL(payload)
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Self.secret), digestAlgorithm: .sha256)
        let signature = try await keys.getKey().sign(Array(signingInput.utf8))
        return signingInput + "." + base64URL(Data(signature))
    }

    private func expectError(
        _ code: RoomcastError.Code,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> UserID
    ) async {
        do {
            let user = try await body()
            Issue.record("expected \(code), got user \(user)", sourceLocation: sourceLocation)
        } catch let error as RoomcastError {
            #expect(error.code == code, sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected a RoomcastError, got \(error)", sourceLocation: sourceLocation)
        }
    }
}

/// Base64url without padding.
private func base64URL(_ text: String) -> String {
    base64URL(Data(text.utf8))
}

/// Base64url without padding.
private func base64URL(_ data: Data) -> String {
    data.base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// Decodes unpadded base64url.
private func base64URLDecoded(_ text: some StringProtocol) -> Data {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    return Data(base64Encoded: base64) ?? Data()
}
