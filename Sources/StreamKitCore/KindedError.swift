/// An error identified by its kind: two errors are equal when their kinds are, wherever and with
/// whatever text they happened, so callers match them (`error == .cancelled`,
/// `error.kind == .truncatedBody`) without reading messages. The rest (offsets, URLs, statuses,
/// the detail) is context for people and logs.
///
/// Kinds are static members on the error or on its `Kind`, so that kinds can be added.
package protocol KindedError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What identifies an error, without its context.
    associatedtype Kind: Hashable, Sendable

    /// What went wrong.
    var kind: Kind { get }
    /// The explanation, for people.
    var detail: String { get }
}

extension KindedError {
    /// Errors are equal when they are of the same kind.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.kind == rhs.kind }

    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// A description: `headline`, then each clause that is present, then `: ` and the detail when
    /// there is one (`invalid playlist for http://a/b.m3u8 (HTTP 404): not found`).
    ///
    /// - Parameters:
    ///   - headline: What failed, usually the kind.
    ///   - clauses: Context clauses with their own leading space (` for <url>`); `nil` ones are left out.
    /// - Returns: The text.
    package func message(_ headline: String, _ clauses: String?...) -> String {
        var text = headline
        for clause in clauses {
            if let clause { text += clause }
        }
        if !detail.isEmpty { text += ": \(detail)" }
        return text
    }
}
