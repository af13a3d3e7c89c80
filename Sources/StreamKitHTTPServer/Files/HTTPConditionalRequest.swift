import Foundation
import StreamKitCore
import StreamKitHTTP

/// The validators of a file: what conditional and range requests are judged against.
public struct HTTPFileValidators: Hashable, Sendable {
    /// What a file's entity tag is made of: any rewrite of the file changes one of them.
    struct FileIdentity: Hashable, Sendable {
        var inode: UInt64
        var size: Int64
        var modifiedNanoseconds: Int64
    }

    /// The file's length.
    public var length: Int64
    /// The modification time, whole seconds since 1970 (RFC 9110 §8.8.2); 0 when there is none
    /// (a proxied resource whose origin sent no Last-Modified): date conditions are then ignored,
    /// as RFC 9110 §13.1.3–4 asks, and a date in If-Range never matches.
    public var lastModified: Int64
    private var tag: EntityTag?
    private var identity: FileIdentity?

    /// Validators with an explicit entity tag.
    public init(length: Int64, entityTag: EntityTag, lastModified: Int64) {
        self.length = length
        self.lastModified = lastModified
        self.tag = entityTag
    }

    /// Validators of a file; the tag is made from its identity only when it is needed.
    init(length: Int64, identity: FileIdentity, lastModified: Int64) {
        self.length = length
        self.lastModified = lastModified
        self.identity = identity
    }

    /// A strong entity tag: equal tags mean byte-identical content (RFC 9110 §8.8.3).
    public var entityTag: EntityTag {
        if let tag { return tag }
        let text = entityTagHeaderValue
        return EntityTag(opaqueTag: String(text.dropFirst().dropLast()))
    }

    /// The `ETag` value, quoted: `"inode-size-mtime"` in hex.
    var entityTagHeaderValue: String {
        if let tag { return tag.headerValue }
        guard let identity else { return "\"\"" }
        var bytes: [UInt8] = [0x22]
        bytes.reserveCapacity(52)
        Self.appendHex(identity.inode, to: &bytes)
        bytes.append(0x2D)
        Self.appendHex(UInt64(identity.size), to: &bytes)
        bytes.append(0x2D)
        Self.appendHex(UInt64(bitPattern: identity.modifiedNanoseconds), to: &bytes)
        bytes.append(0x22)
        return String(unsafeUninitializedCapacity: bytes.count) { buffer in
            _ = buffer.initialize(from: bytes)
            return bytes.count
        }
    }

    private static func appendHex(_ value: UInt64, to bytes: inout [UInt8]) {
        var shift = 60
        while shift > 0 && (value >> UInt64(shift)) == 0 { shift -= 4 }
        while shift >= 0 {
            let digit = UInt8((value >> UInt64(shift)) & 0xF)
            bytes.append(digit < 10 ? 0x30 + digit : 0x61 + digit - 10)
            shift -= 4
        }
    }
}

/// How a GET or HEAD of a file is answered given its conditional and Range fields.
public enum HTTPConditionalRequest {
    /// The outcome.
    public enum Selection: Hashable, Sendable {
        /// 304: the client's copy is current.
        case notModified
        /// 412: a precondition (`If-Match`, `If-Unmodified-Since`) failed.
        case preconditionFailed
        /// 200 with the whole file.
        case whole
        /// 206 with these bytes.
        case part(ByteRange)
        /// 416: no requested range overlaps the file.
        case unsatisfiable
    }

    /// Evaluates the preconditions in the order of RFC 9110 §13.2.2, then the Range (§14.2).
    ///
    /// Range applies to GET only (HEAD answers with the whole representation's fields). Several
    /// ranges are answered with the whole file, which §14.2 allows.
    public static func evaluate(
        method: HTTPMethod, headers: HTTPHeaders, validators: HTTPFileValidators
    ) -> Selection {
        let ifMatch = headers.listValues("If-Match")
        if !ifMatch.isEmpty {
            let condition = EntityTagCondition(listMembers: ifMatch)
            let matches: Bool
            switch condition {
            case .any: matches = true
            case .tags(let tags): matches = tags.contains { $0.strongMatches(validators.entityTag) }
            case nil: matches = false
            }
            if !matches { return .preconditionFailed }
        } else if validators.lastModified > 0, let text = headers["If-Unmodified-Since"],
            let date = HTTPDate.parse(text)
        {
            if validators.lastModified > Int64(date.timeIntervalSince1970) { return .preconditionFailed }
        }

        let ifNoneMatch = headers.listValues("If-None-Match")
        if !ifNoneMatch.isEmpty {
            if let condition = EntityTagCondition(listMembers: ifNoneMatch),
                condition.weaklyMatches(validators.entityTag)
            {
                return method == .get || method == .head ? .notModified : .preconditionFailed
            }
        } else if method == .get || method == .head, validators.lastModified > 0,
            let text = headers["If-Modified-Since"],
            let date = HTTPDate.parse(text), validators.lastModified <= Int64(date.timeIntervalSince1970)
        {
            return .notModified
        }

        guard method == .get, let rangeText = headers["Range"], let request = RangeRequest(headerValue: rangeText)
        else { return .whole }
        if let ifRange = headers["If-Range"] {
            if let tag = EntityTag(headerValue: ifRange) {
                if !tag.strongMatches(validators.entityTag) { return .whole }
            } else if let date = HTTPDate.parse(ifRange) {
                if validators.lastModified <= 0 || Int64(date.timeIntervalSince1970) != validators.lastModified {
                    return .whole
                }
            } else {
                return .whole
            }
        }
        switch request.resolve(length: validators.length) {
        case .unsatisfiable:
            return .unsatisfiable
        case .satisfiable(let ranges):
            return ranges.count == 1 ? .part(ranges[0]) : .whole
        }
    }
}
