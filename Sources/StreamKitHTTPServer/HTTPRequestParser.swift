/// Reads HTTP/1.1 requests from the bytes of a connection (RFC 9112), one event at a time.
///
/// A pure state machine: ``feed(_:)-(UnsafeRawBufferPointer)`` hands it bytes as they arrive, in
/// pieces of any size, and ``next()`` returns the next event — the head, pieces of the body, the
/// end of the message — or `nil` when it needs more bytes. Pipelined requests stay buffered until
/// the events of the one before them have been taken. A malformed request throws an error naming
/// the status to answer with; the parser then stays failed, since the connection must close.
///
/// Strict where laxness enables request smuggling or confusion: single spaces in the request
/// line, no whitespace before a field's colon, no obsolete line folding, no bare CR,
/// Transfer-Encoding and Content-Length never together, one Host. Lenient where RFC 9112 allows:
/// empty lines before a request (§2.2) and LF without CR as a line end (§2.2).
import StreamKitHTTP

public struct HTTPRequestParser: Sendable {
    /// Size limits; requests beyond them fail with 414, 431 or 413.
    public struct Limits: Hashable, Sendable {
        /// The longest request line, without its line end (414 beyond; RFC 9112 §3).
        public var maximumRequestLineLength: Int
        /// The largest header section, field lines and line ends included (431 beyond).
        public var maximumHeaderSectionLength: Int
        /// The most header fields (431 beyond).
        public var maximumHeaderFieldCount: Int
        /// The largest body (413 beyond).
        public var maximumBodyLength: Int64

        /// Limits; the defaults are the server's (8 KiB, 16 KiB, 100 fields, 1 MiB).
        public init(
            maximumRequestLineLength: Int = 8 * 1024, maximumHeaderSectionLength: Int = 16 * 1024,
            maximumHeaderFieldCount: Int = 100, maximumBodyLength: Int64 = 1 << 20
        ) {
            self.maximumRequestLineLength = maximumRequestLineLength
            self.maximumHeaderSectionLength = maximumHeaderSectionLength
            self.maximumHeaderFieldCount = maximumHeaderFieldCount
            self.maximumBodyLength = maximumBodyLength
        }
    }

    /// What the parser read.
    public enum Event: Hashable, Sendable {
        /// A complete request head. Body events, if any, and ``end`` follow.
        case head(HTTPServerRequestHead)
        /// The next bytes of the body (chunked framing removed).
        case body([UInt8])
        /// The request is complete; the next event belongs to the next request.
        case end
    }

    private enum State: Hashable, Sendable {
        case requestLine
        case headerFields
        case body(remaining: Int64)
        case chunkSize
        case chunkData(remaining: Int64)
        case chunkDataEnd
        case trailerFields
        case messageEnd
    }

    /// The limits this parser enforces.
    public let limits: Limits

    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Bytes from `readIndex` up to here are known to hold no LF: a line is never rescanned.
    private var scanIndex = 0
    private var state = State.requestLine
    private var failure: HTTPRequestParseError?
    private var pendingHead: HTTPServerRequestHead?
    private var fields = HTTPHeaders()
    private var headerSectionLength = 0
    private var bodyLength: Int64 = 0

    /// The longest chunk size line with extensions (RFC 9112 §7.1.1 sets none; this bounds memory).
    static let maximumChunkSizeLineLength = 1024

    /// A parser waiting for the first request.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Bytes received and not yet turned into events.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Whether the parser stands between requests with nothing buffered: no partial request.
    public var isIdle: Bool { state == .requestLine && bufferedByteCount == 0 && failure == nil }

    /// Whether a request has begun (bytes of it arrived) but its events are not all taken yet.
    public var isInsideRequest: Bool { !(state == .requestLine && bufferedByteCount == 0) }

    /// Appends bytes received from the connection.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        compactIfWorthwhile()
        buffer.append(contentsOf: bytes)
    }

    /// Appends bytes received from the connection.
    public mutating func feed(_ bytes: some Sequence<UInt8>) {
        compactIfWorthwhile()
        buffer.append(contentsOf: bytes)
    }

    /// The next event, or `nil` when more bytes are needed.
    ///
    /// - Throws: ``HTTPRequestParseError`` when the bytes are not a valid request; every later
    ///   call throws the same error.
    public mutating func next() throws(HTTPRequestParseError) -> Event? {
        if let failure { throw failure }
        do {
            return try step()
        } catch {
            failure = error
            throw error
        }
    }

    // MARK: States

    private mutating func step() throws(HTTPRequestParseError) -> Event? {
        while true {
            switch state {
            case .requestLine:
                let limit = limits.maximumRequestLineLength
                guard let line = try nextLine(limit: limit, error: .requestLineTooLong(limit: limit)) else {
                    return nil
                }
                if line.isEmpty { continue }  // RFC 9112 §2.2: ignore empty lines before a request
                pendingHead = try parseRequestLine(line)
                fields = HTTPHeaders()
                headerSectionLength = 0
                state = .headerFields

            case .headerFields:
                guard let line = try nextHeaderSectionLine() else { return nil }
                if line.isEmpty { return .head(try finishHead()) }
                guard fields.count < limits.maximumHeaderFieldCount else {
                    throw .tooManyHeaderFields(limit: limits.maximumHeaderFieldCount)
                }
                let (name, value) = try parseField(line)
                fields.add(name, value)

            case .body(let remaining):
                guard let piece = take(upTo: remaining) else { return nil }
                let left = remaining - Int64(piece.count)
                state = left == 0 ? .messageEnd : .body(remaining: left)
                return .body(piece)

            case .chunkSize:
                guard
                    let line = try nextLine(
                        limit: Self.maximumChunkSizeLineLength, error: .malformedChunk("size line too long"))
                else { return nil }
                let size = try parseChunkSize(line)
                if size == 0 {
                    headerSectionLength = 0
                    state = .trailerFields
                } else {
                    bodyLength += size
                    guard bodyLength <= limits.maximumBodyLength else {
                        throw .bodyTooLarge(limit: limits.maximumBodyLength)
                    }
                    state = .chunkData(remaining: size)
                }

            case .chunkData(let remaining):
                guard let piece = take(upTo: remaining) else { return nil }
                let left = remaining - Int64(piece.count)
                state = left == 0 ? .chunkDataEnd : .chunkData(remaining: left)
                return .body(piece)

            case .chunkDataEnd:
                guard let line = try nextLine(limit: 0, error: .malformedChunk("data longer than its size"))
                else { return nil }
                guard line.isEmpty else { throw .malformedChunk("data longer than its size") }
                state = .chunkSize

            case .trailerFields:
                // Trailer fields are read and dropped: nothing the server does depends on them.
                guard let line = try nextHeaderSectionLine() else { return nil }
                if line.isEmpty {
                    state = .messageEnd
                } else {
                    _ = try parseField(line)
                }

            case .messageEnd:
                state = .requestLine
                pendingHead = nil
                return .end
            }
        }
    }

    private mutating func nextHeaderSectionLine() throws(HTTPRequestParseError) -> Range<Int>? {
        let limit = limits.maximumHeaderSectionLength
        let budget = limit - headerSectionLength
        let start = readIndex
        guard let line = try nextLine(limit: max(0, budget - 2), error: .headerSectionTooLarge(limit: limit)) else {
            return nil
        }
        headerSectionLength += readIndex - start
        guard headerSectionLength <= limits.maximumHeaderSectionLength else {
            throw .headerSectionTooLarge(limit: limits.maximumHeaderSectionLength)
        }
        return line
    }

    private mutating func finishHead() throws(HTTPRequestParseError) -> HTTPServerRequestHead {
        guard var head = pendingHead else { preconditionFailure("header fields without a request line") }
        head.headers = fields
        fields = HTTPHeaders()
        pendingHead = nil

        var hosts = 0
        for field in head.headers where HTTPHeaders.equalNames(field.name, "Host") { hosts += 1 }
        if hosts > 1 { throw .duplicateHost }
        if hosts == 0 && head.version == .http11 { throw .missingHost }

        bodyLength = 0
        if head.headers.contains("Transfer-Encoding") {
            let transferCodings = head.headers.listValues("Transfer-Encoding").map { $0.lowercased() }
            if head.version == .http10 { throw .conflictingFraming("Transfer-Encoding in an HTTP/1.0 request") }
            if head.headers.contains("Content-Length") {
                throw .conflictingFraming("both Transfer-Encoding and Content-Length")
            }
            guard transferCodings.last == "chunked" else {
                throw .conflictingFraming("Transfer-Encoding does not end in chunked")
            }
            if transferCodings.count > 1 { throw .unsupportedTransferCoding(transferCodings.joined(separator: ", ")) }
            state = .chunkSize
        } else if head.headers.contains("Content-Length") {
            let lengths = head.headers.listValues("Content-Length")
            guard let first = lengths.first, lengths.allSatisfy({ $0 == first }), let length = Self.decimal(first)
            else { throw .invalidContentLength(head.headers.values("Content-Length").joined(separator: ", ")) }
            guard length <= limits.maximumBodyLength else { throw .bodyTooLarge(limit: limits.maximumBodyLength) }
            state = length == 0 ? .messageEnd : .body(remaining: length)
        } else {
            state = .messageEnd
        }
        return head
    }

    /// Up to `remaining` buffered bytes, consumed; `nil` when none are buffered.
    private mutating func take(upTo remaining: Int64) -> [UInt8]? {
        let available = buffer.count - readIndex
        guard available > 0 else { return nil }
        let count = Int(min(Int64(available), remaining))
        let piece = Array(buffer[readIndex..<(readIndex + count)])
        readIndex += count
        scanIndex = readIndex
        return piece
    }

    // MARK: Lines

    /// The next line's bytes (without CR LF), consuming it; `nil` when no full line is buffered.
    private mutating func nextLine(
        limit: Int, error: @autoclosure () -> HTTPRequestParseError
    ) throws(HTTPRequestParseError) -> Range<Int>? {
        let end = buffer.count
        var found: Int?
        buffer.withUnsafeBufferPointer { bytes in
            var index = max(scanIndex, readIndex)
            while index < end {
                if bytes[index] == 0x0A {
                    found = index
                    return
                }
                index += 1
            }
        }
        guard let newline = found else {
            scanIndex = end
            // A CR may still be followed by its LF: allow it in the length check.
            if end - readIndex > limit + 1 { throw error() }
            return nil
        }
        var lineEnd = newline
        if lineEnd > readIndex && buffer[lineEnd - 1] == 0x0D { lineEnd -= 1 }
        guard lineEnd - readIndex <= limit else { throw error() }
        let line = readIndex..<lineEnd
        readIndex = newline + 1
        scanIndex = readIndex
        return line
    }

    private mutating func compactIfWorthwhile() {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
            readIndex = 0
            scanIndex = 0
        } else if readIndex > 4096 && readIndex * 2 > buffer.count {
            buffer.removeFirst(readIndex)
            scanIndex -= readIndex
            readIndex = 0
        }
    }

    // MARK: Request line and fields

    private func parseRequestLine(_ line: Range<Int>) throws(HTTPRequestParseError) -> HTTPServerRequestHead {
        let bytes = buffer[line]
        guard let firstSpace = bytes.firstIndex(of: 0x20),
            let secondSpace = bytes[(firstSpace + 1)...].firstIndex(of: 0x20)
        else { throw .malformedRequestLine(Self.text(bytes)) }
        let methodBytes = bytes[..<firstSpace]
        let targetBytes = bytes[(firstSpace + 1)..<secondSpace]
        let versionBytes = bytes[(secondSpace + 1)...]
        guard !methodBytes.isEmpty, methodBytes.allSatisfy(Self.isTokenByte) else {
            throw .invalidMethod(Self.text(methodBytes))
        }
        let method = HTTPMethod(rawValue: Self.text(methodBytes))
        let version = try Self.parseVersion(versionBytes)
        guard !targetBytes.isEmpty, targetBytes.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
            throw .invalidTarget(Self.text(targetBytes))
        }
        let target = Self.text(targetBytes)
        if targetBytes.first == 0x2F {  // origin form, the usual one
            return HTTPServerRequestHead(method: method, target: target, version: version)
        }
        let isAsteriskForm = target == "*" && method == .options
        let lowered = target.prefix(8).lowercased()
        let isAbsoluteForm =
            (lowered.hasPrefix("http://") || lowered.hasPrefix("https://"))
            && target.count > (lowered.hasPrefix("http://") ? 7 : 8)
        guard isAsteriskForm || isAbsoluteForm else { throw .invalidTarget(target) }
        return HTTPServerRequestHead(method: method, target: target, version: version)
    }

    private static func parseVersion(
        _ bytes: ArraySlice<UInt8>
    ) throws(HTTPRequestParseError) -> HTTPServerRequestHead.Version {
        let start = bytes.startIndex
        guard bytes.count == 8, bytes.starts(with: [0x48, 0x54, 0x54, 0x50, 0x2F]), bytes[start + 6] == 0x2E,
            isDigit(bytes[start + 5]), isDigit(bytes[start + 7])
        else { throw .malformedVersion(Self.text(bytes)) }
        let major = Int(bytes[start + 5] - 0x30)
        let minor = Int(bytes[start + 7] - 0x30)
        guard major == 1 else { throw .unsupportedVersion(Self.text(bytes)) }
        // RFC 9110 §6.2: a higher minor version is answered as the highest one we speak.
        return minor == 0 ? .http10 : .http11
    }

    private func parseField(_ line: Range<Int>) throws(HTTPRequestParseError) -> (String, String) {
        let bytes = buffer[line]
        guard let first = bytes.first else { throw .malformedHeaderField("") }
        if first == 0x20 || first == 0x09 { throw .obsoleteLineFolding }
        guard let colon = bytes.firstIndex(of: 0x3A) else { throw .malformedHeaderField(Self.text(bytes)) }
        let name = bytes[..<colon]
        guard !name.isEmpty, name.allSatisfy(Self.isTokenByte) else { throw .malformedHeaderField(Self.text(bytes)) }
        var value = bytes[(colon + 1)...]
        while let byte = value.first, byte == 0x20 || byte == 0x09 { value = value.dropFirst() }
        while let byte = value.last, byte == 0x20 || byte == 0x09 { value = value.dropLast() }
        guard value.allSatisfy({ $0 == 0x09 || $0 >= 0x20 && $0 != 0x7F }) else {
            throw .malformedHeaderField(Self.text(bytes))
        }
        return (Self.text(name), Self.text(value))
    }

    private func parseChunkSize(_ line: Range<Int>) throws(HTTPRequestParseError) -> Int64 {
        let bytes = buffer[line]
        let digits = bytes.prefix(while: Self.isHexDigit)
        guard !digits.isEmpty, digits.count <= 15 else {
            throw .malformedChunk("size '\(Self.text(bytes.prefix(20)))'")
        }
        var rest = bytes[digits.endIndex...]
        while let byte = rest.first, byte == 0x20 || byte == 0x09 { rest = rest.dropFirst() }
        if let byte = rest.first {
            // Chunk extensions (RFC 9112 §7.1.1) are ignored, but must look like extensions.
            guard byte == 0x3B, rest.allSatisfy({ $0 == 0x09 || $0 >= 0x20 && $0 != 0x7F }) else {
                throw .malformedChunk("size line '\(Self.text(bytes.prefix(40)))'")
            }
        }
        var size: Int64 = 0
        for digit in digits {
            let value: UInt8 =
                switch digit {
                case 0x30...0x39: digit - 0x30
                case 0x41...0x46: digit - 0x41 + 10
                default: digit - 0x61 + 10
                }
            size = size << 4 | Int64(value)
        }
        return size
    }

    // MARK: Bytes

    private static let tokenBytes: [Bool] = (0..<256).map { value in
        let byte = UInt8(value)
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// tchar (RFC 9110 §5.6.2).
    static func isTokenByte(_ byte: UInt8) -> Bool { tokenBytes[Int(byte)] }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    }

    private static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    /// A non-negative decimal that fits comfortably in `Int64`, digits only.
    static func decimal(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy(isDigit) else { return nil }
        return Int64(text)
    }
}
