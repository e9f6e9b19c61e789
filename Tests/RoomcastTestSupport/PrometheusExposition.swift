/// A strict reader of Prometheus's text exposition format (0.0.4), for tests of `/metrics`.
///
/// It refuses what Prometheus would refuse or misread: a malformed line, a bad metric or label
/// name, a bad escape, a value that is not a number, a `# TYPE` after its metric's samples or
/// twice, samples of one metric not kept together, a sample that does not belong to its typed
/// metric (a counter's or gauge's samples carry its name, a histogram's `_bucket`, `_sum`,
/// `_count`), and a histogram whose buckets are not cumulative, lack `le="+Inf"`, or disagree
/// with `_count`.
public struct PrometheusExposition: Sendable {
    /// One sample line.
    public struct Sample: Sendable, Equatable {
        public var name: String
        public var labels: [String: String]
        public var value: Double
    }

    /// One metric: its `# TYPE`, `# HELP` and samples.
    public struct Family: Sendable {
        public var name: String
        public var type: String = "untyped"
        public var help: String?
        public var samples: [Sample] = []
        /// Whether a `# TYPE` line was read (an explicit `untyped` counts).
        var hasTypeLine = false
    }

    /// Metrics by name.
    public private(set) var families: [String: Family] = [:]

    /// Parses `text`.
    /// - Throws: ``PrometheusExpositionError`` naming the line.
    public init(parsing text: String) throws(PrometheusExpositionError) {
        var finished: Set<String> = []
        var current: String?
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, rawLine) in lines.enumerated() {
            let number = index + 1
            let line = String(rawLine)
            // Empty lines are allowed (the text ends with one).
            if line.isEmpty { continue }
            func fail(_ reason: String) -> PrometheusExpositionError {
                PrometheusExpositionError(line: number, text: line, reason: reason)
            }
            if line.hasPrefix("#") {
                let words = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
                guard words.count >= 3, words[0] == "#", ["HELP", "TYPE"].contains(words[1]) else { continue }  // a comment
                let name = words[2]
                guard Self.isMetricName(name) else { throw fail("bad metric name '\(name)'") }
                guard !finished.contains(name) else { throw fail("'\(name)' described after its samples were closed") }
                if let current, current != name { finished.insert(current) }
                current = name
                var family = families[name] ?? Family(name: name)
                if words[1] == "HELP" {
                    guard family.help == nil else { throw fail("second HELP for '\(name)'") }
                    family.help = words.count > 3 ? try Self.unescapeHelp(words[3]).get(orThrow: fail("bad escape in HELP")) : ""
                } else {
                    guard words.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(words[3]) else {
                        throw fail("bad TYPE")
                    }
                    guard family.samples.isEmpty else { throw fail("TYPE of '\(name)' after its samples") }
                    guard !family.hasTypeLine else { throw fail("second TYPE for '\(name)'") }
                    family.type = words[3]
                    family.hasTypeLine = true
                }
                families[name] = family
                continue
            }
            let sample = try Self.parseSample(line).get(orThrow: fail("malformed sample"))
            let familyName = family(of: sample.name)
            guard !finished.contains(familyName) else { throw fail("samples of '\(familyName)' are not kept together") }
            if let current, current != familyName { finished.insert(current) }
            current = familyName
            var family = families[familyName] ?? Family(name: familyName)
            switch family.type {
            case "histogram":
                guard sample.name != familyName else { throw fail("a histogram's sample must be _bucket, _sum or _count") }
                if sample.name.hasSuffix("_bucket") {
                    guard let bound = sample.labels["le"], Self.number(bound) != nil else { throw fail("bucket without a numeric le") }
                }
            case "summary":
                break
            default:
                guard sample.name == familyName else { throw fail("sample '\(sample.name)' does not belong to '\(familyName)'") }
            }
            family.samples.append(sample)
            families[familyName] = family
        }
        for family in families.values where family.type == "histogram" {
            try Self.checkHistogram(family)
        }
    }

    /// The value of the sample `name` with exactly these labels.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        families[family(of: name)]?.samples.first { $0.name == name && $0.labels == labels }?.value
    }

    /// The sum of the samples `name` whose labels include `labels`.
    public func sum(_ name: String, matching labels: [String: String] = [:]) -> Double {
        (families[family(of: name)]?.samples ?? [])
            .filter { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }
            .reduce(0) { $0 + $1.value }
    }

    /// The metric a sample name belongs to: a histogram's or summary's suffixes are its samples.
    private func family(of sampleName: String) -> String {
        for suffix in ["_bucket", "_sum", "_count"] where sampleName.hasSuffix(suffix) {
            let base = String(sampleName.dropLast(suffix.count))
            if let type = families[base]?.type, type == "histogram" || type == "summary" { return base }
        }
        return sampleName
    }

    private static func checkHistogram(_ family: Family) throws(PrometheusExpositionError) {
        func fail(_ reason: String) -> PrometheusExpositionError {
            PrometheusExpositionError(line: 0, text: family.name, reason: reason)
        }
        var series: [[String: String]: (buckets: [(Double, Double)], sum: Double?, count: Double?)] = [:]
        for sample in family.samples {
            var key = sample.labels
            key["le"] = nil
            var entry = series[key] ?? ([], nil, nil)
            if sample.name.hasSuffix("_bucket") {
                entry.buckets.append((number(sample.labels["le"]!)!, sample.value))
            } else if sample.name.hasSuffix("_sum") {
                entry.sum = sample.value
            } else if sample.name.hasSuffix("_count") {
                entry.count = sample.value
            }
            series[key] = entry
        }
        for (labels, entry) in series {
            guard let count = entry.count, entry.sum != nil else { throw fail("\(labels): no _sum or _count") }
            let sorted = entry.buckets.sorted { $0.0 < $1.0 }
            guard let last = sorted.last, last.0 == .infinity else { throw fail("\(labels): no le=\"+Inf\" bucket") }
            guard last.1 == count else { throw fail("\(labels): +Inf bucket \(last.1) but _count \(count)") }
            for (lower, upper) in zip(sorted, sorted.dropFirst()) where upper.1 < lower.1 {
                throw fail("\(labels): buckets not cumulative at le=\(upper.0)")
            }
        }
    }

    // MARK: Lexing

    static func isMetricName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIILetter || first == "_" || first == ":" else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == "_" || $0 == ":" }
    }

    static func isLabelName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIILetter || first == "_" else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == "_" }
    }

    /// A sample value: a float, `+Inf`, `-Inf` or `NaN`.
    static func number(_ text: String) -> Double? {
        switch text {
        case "+Inf", "Inf": return .infinity
        case "-Inf": return -.infinity
        case "NaN": return .nan
        default:
            guard text.unicodeScalars.allSatisfy({ $0.isASCIIDigit || "+-.eE".unicodeScalars.contains($0) }) else { return nil }
            return Double(text)
        }
    }

    private static func unescapeHelp(_ text: String) -> String? {
        var result = ""
        var escaped = false
        for character in text {
            if escaped {
                switch character {
                case "\\": result.append("\\")
                case "n": result.append("\n")
                default: return nil
                }
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return escaped ? nil : result
    }

    private static func parseSample(_ line: String) -> Sample? {
        var scalars = Substring(line).unicodeScalars[...]
        var name = ""
        while let scalar = scalars.first, scalar != "{", scalar != " " {
            name.unicodeScalars.append(scalar)
            scalars.removeFirst()
        }
        guard isMetricName(name) else { return nil }
        var labels: [String: String] = [:]
        if scalars.first == "{" {
            scalars.removeFirst()
            while scalars.first != "}" {
                var labelName = ""
                while let scalar = scalars.first, scalar != "=" {
                    labelName.unicodeScalars.append(scalar)
                    scalars.removeFirst()
                }
                guard isLabelName(labelName), labels[labelName] == nil, scalars.first == "=" else { return nil }
                scalars.removeFirst()
                guard scalars.first == "\"" else { return nil }
                scalars.removeFirst()
                var value = ""
                while true {
                    guard let scalar = scalars.popFirst() else { return nil }
                    if scalar == "\"" { break }
                    if scalar == "\\" {
                        switch scalars.popFirst() {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: return nil
                        }
                    } else {
                        value.unicodeScalars.append(scalar)
                    }
                }
                labels[labelName] = value
                if scalars.first == "," {
                    scalars.removeFirst()
                } else {
                    guard scalars.first == "}" else { return nil }
                }
            }
            scalars.removeFirst()
        }
        guard scalars.first == " " else { return nil }
        scalars.removeFirst()
        let rest = String(String.UnicodeScalarView(scalars)).split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        // A value, then an optional integer timestamp (milliseconds).
        guard (1...2).contains(rest.count), let value = number(rest[0]) else { return nil }
        if rest.count == 2, Int64(rest[1]) == nil { return nil }
        return Sample(name: name, labels: labels, value: value)
    }
}

/// Exposition text that does not parse.
public struct PrometheusExpositionError: Error, CustomStringConvertible {
    /// The 1-based line (0: the metric as a whole).
    public let line: Int
    public let text: String
    public let reason: String
    public var description: String { "line \(line) '\(text)': \(reason)" }
}

extension Optional {
    fileprivate func get(orThrow error: @autoclosure () -> PrometheusExpositionError) throws(PrometheusExpositionError) -> Wrapped {
        guard let self else { throw error() }
        return self
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
