extension MPD {
    /// Whether `bytes` (the start of a response) are an MPD: after a byte order mark, white space,
    /// an XML declaration, comments and a document type declaration, the first element is `MPD`
    /// (with or without a namespace prefix). Reads at most the first 4 KB. (The parser refuses a
    /// DOCTYPE; seeing through one here makes that refusal the answer, not a plain download.)
    public static func looksLikeMPD(_ bytes: some Collection<UInt8>) -> Bool {
        var rest = bytes.prefix(4096)[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        func skipSpace() { rest = rest.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D } }
        func skip(past terminator: [UInt8]) -> Bool {
            var scan = rest
            while !scan.isEmpty {
                if scan.starts(with: terminator) {
                    rest = scan.dropFirst(terminator.count)
                    return true
                }
                scan = scan.dropFirst()
            }
            return false
        }
        while true {
            skipSpace()
            if rest.starts(with: Array("<?".utf8)) {
                guard skip(past: Array("?>".utf8)) else { return false }
            } else if rest.starts(with: Array("<!--".utf8)) {
                guard skip(past: Array("-->".utf8)) else { return false }
            } else if rest.starts(with: Array("<!DOCTYPE".utf8)) {
                // An internal subset (`[ ... ]`) holds `>`s of its own.
                let head = rest.prefix { $0 != UInt8(ascii: ">") }
                let subset = head.contains(UInt8(ascii: "["))
                guard skip(past: Array((subset ? "]>" : ">").utf8)) else { return false }
            } else {
                break
            }
        }
        guard rest.first == UInt8(ascii: "<") else { return false }
        let name = rest.dropFirst().prefix {
            $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D && $0 != UInt8(ascii: ">") && $0 != UInt8(ascii: "/")
        }
        let local = name.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false).last ?? name[...]
        return local.elementsEqual("MPD".utf8)
    }
}
