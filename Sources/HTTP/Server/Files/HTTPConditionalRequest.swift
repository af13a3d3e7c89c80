import Core
import Foundation

/// The validators of a file: what conditional and range requests are judged against.
public struct HTTPFileValidators: Hashable, Sendable {
    /// The file's length.
    public var length: Int64
    /// A strong entity tag: equal tags mean byte-identical content (RFC 9110 §8.8.3).
    public var entityTag: EntityTag
    /// The modification time, whole seconds since 1970 (RFC 9110 §8.8.2).
    public var lastModified: Int64

    public init(length: Int64, entityTag: EntityTag, lastModified: Int64) {
        self.length = length
        self.entityTag = entityTag
        self.lastModified = lastModified
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
        let current = validators.entityTag
        let ifMatch = headers.listValues("If-Match")
        if !ifMatch.isEmpty {
            let condition = EntityTagCondition(listMembers: ifMatch)
            let matches: Bool
            switch condition {
            case .any: matches = true
            case .tags(let tags): matches = tags.contains { $0.strongMatches(current) }
            case nil: matches = false
            }
            if !matches { return .preconditionFailed }
        } else if let text = headers["If-Unmodified-Since"], let date = HTTPDate.parse(text) {
            if validators.lastModified > Int64(date.timeIntervalSince1970) { return .preconditionFailed }
        }

        let ifNoneMatch = headers.listValues("If-None-Match")
        if !ifNoneMatch.isEmpty {
            if let condition = EntityTagCondition(listMembers: ifNoneMatch), condition.weaklyMatches(current) {
                return method == .get || method == .head ? .notModified : .preconditionFailed
            }
        } else if method == .get || method == .head, let text = headers["If-Modified-Since"],
            let date = HTTPDate.parse(text), validators.lastModified <= Int64(date.timeIntervalSince1970)
        {
            return .notModified
        }

        guard method == .get, let rangeText = headers["Range"], let request = RangeRequest(headerValue: rangeText)
        else { return .whole }
        if let ifRange = headers["If-Range"] {
            if let tag = EntityTag(headerValue: ifRange) {
                if !tag.strongMatches(current) { return .whole }
            } else if let date = HTTPDate.parse(ifRange) {
                if Int64(date.timeIntervalSince1970) != validators.lastModified { return .whole }
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
