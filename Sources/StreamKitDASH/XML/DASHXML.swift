/// A small XML reader of our own for MPDs (ISO/IEC 23009-1 documents are XML 1.0): elements,
/// attributes, text, CDATA, comments and processing instructions, as a tree of values.
///
/// Why not Foundation's `XMLParser` or libxml2: MPDs are read on the download's hot path and
/// fuzzed; a reader over bytes with no entity expansion at all (a document type declaration is
/// refused, so "billion laughs" cannot happen), hard limits on depth, elements and attribute
/// counts, and no I/O is smaller than a shim and has no platform differences. Only the five
/// predefined entities and numeric character references are decoded. Namespace prefixes are
/// kept in names (`cenc:pssh`); DASH elements are matched on their local name.
public enum DASHXML {
    /// One element: its name, attributes in document order, children, and its text (the
    /// character data directly inside it, concatenated).
    public struct Element: Hashable, Sendable {
        public var name: String
        public var attributes: [(name: String, value: String)]
        public var children: [Element]
        public var text: String

        public init(
            name: String, attributes: [(name: String, value: String)] = [], children: [Element] = [], text: String = ""
        ) {
            self.name = name
            self.attributes = attributes
            self.children = children
            self.text = text
        }

        /// The name without its namespace prefix.
        public var localName: Substring { name.split(separator: ":", maxSplits: 1).last ?? name[...] }

        /// The value of the attribute `name` (compared with prefixes as written).
        public subscript(_ name: String) -> String? {
            attributes.first { $0.name == name }?.value
        }

        /// The children whose local name is `name`.
        public func children(named name: String) -> [Element] { children.filter { $0.localName == name } }

        public static func == (lhs: Element, rhs: Element) -> Bool {
            lhs.name == rhs.name && lhs.text == rhs.text && lhs.children == rhs.children
                && lhs.attributes.elementsEqual(rhs.attributes) { $0.name == $1.name && $0.value == $1.value }
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(name)
            hasher.combine(text)
            hasher.combine(children)
            for attribute in attributes {
                hasher.combine(attribute.name)
                hasher.combine(attribute.value)
            }
        }
    }

    /// How much a document may hold.
    public struct Limits: Hashable, Sendable {
        public private(set) var maximumDepth: Int
        public var maximumElements: Int
        public var maximumAttributes: Int

        /// `maximumDepth` is at most 1,000: the tree is read without recursion, but freed with it.
        public init(maximumDepth: Int = 64, maximumElements: Int = 4_000_000, maximumAttributes: Int = 256) {
            self.maximumDepth = min(maximumDepth, 1_000)
            self.maximumElements = maximumElements
            self.maximumAttributes = maximumAttributes
        }
    }

    /// Why a document could not be read, and where (a byte offset and a line).
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var reason: String
        public var offset: Int
        public var line: Int

        public var description: String { "line \(line): \(reason)" }
    }

    /// Reads the document in `bytes` (UTF-8, a byte order mark allowed) and returns its root element.
    public static func parse(_ bytes: [UInt8], limits: Limits = Limits()) throws(ParseError) -> Element {
        var reader = Reader(bytes: bytes, limits: limits)
        return try reader.document()
    }
}

extension DASHXML {
    struct Reader {
        let bytes: [UInt8]
        let limits: Limits
        var position = 0
        var elements = 0

        init(bytes: [UInt8], limits: Limits) {
            self.bytes = bytes
            self.limits = limits
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        }

        mutating func document() throws(ParseError) -> Element {
            try skipMisc()
            guard peek(UInt8(ascii: "<")) else { throw failure("no root element") }
            var root = Element(name: "")
            var stack: [Element] = []
            // One loop over the document with an explicit stack: no recursion for a deep one.
            if let finished = try openElement(into: &stack) { root = finished }
            while !stack.isEmpty {
                guard position < bytes.count else { throw failure("the document ends inside <\(stack.last!.name)>") }
                if peek(UInt8(ascii: "<")) {
                    if starts("</") {
                        position += 2
                        let name = try readName()
                        skipSpace()
                        try expect(UInt8(ascii: ">"))
                        let element = stack.removeLast()
                        guard element.name == name else {
                            throw failure("</\(name)> closes <\(element.name)>")
                        }
                        if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(element) }
                    } else if starts("<!--") {
                        try skipComment()
                    } else if starts("<![CDATA[") {
                        position += 9
                        guard let end = find("]]>") else { throw failure("an unterminated CDATA section") }
                        stack[stack.count - 1].text += String(decoding: bytes[position..<end], as: UTF8.self)
                        position = end + 3
                    } else if starts("<?") {
                        try skipProcessingInstruction()
                    } else if starts("<!") {
                        throw failure("a declaration inside an element")
                    } else {
                        if let finished = try openElement(into: &stack) {
                            if stack.isEmpty {
                                root = finished
                            } else {
                                stack[stack.count - 1].children.append(finished)
                            }
                        }
                    }
                } else {
                    let start = position
                    while position < bytes.count && bytes[position] != UInt8(ascii: "<") { position += 1 }
                    stack[stack.count - 1].text += try decodeText(bytes[start..<position])
                }
            }
            try skipMisc()
            guard position >= bytes.count else { throw failure("content after the root element") }
            return root
        }

        /// Reads a start tag; an empty-element tag is returned finished, any other is pushed.
        @discardableResult
        mutating func openElement(into stack: inout [Element]) throws(ParseError) -> Element? {
            position += 1
            let name = try readName()
            elements += 1
            guard elements <= limits.maximumElements else {
                throw failure("more than \(limits.maximumElements) elements")
            }
            var element = Element(name: name)
            while true {
                let hadSpace = skipSpace()
                guard position < bytes.count else { throw failure("the document ends inside <\(name)") }
                if peek(UInt8(ascii: "/")) {
                    position += 1
                    try expect(UInt8(ascii: ">"))
                    return element
                }
                if peek(UInt8(ascii: ">")) {
                    position += 1
                    guard stack.count < limits.maximumDepth else {
                        throw failure("elements nested deeper than \(limits.maximumDepth)")
                    }
                    stack.append(element)
                    return nil
                }
                guard hadSpace else { throw failure("no space before an attribute of <\(name)>") }
                let attribute = try readName()
                skipSpace()
                try expect(UInt8(ascii: "="))
                skipSpace()
                guard position < bytes.count, bytes[position] == 0x22 || bytes[position] == 0x27 else {
                    throw failure("the value of \(attribute) is not quoted")
                }
                let quote = bytes[position]
                position += 1
                let start = position
                while position < bytes.count && bytes[position] != quote {
                    if bytes[position] == UInt8(ascii: "<") { throw failure("'<' in the value of \(attribute)") }
                    position += 1
                }
                guard position < bytes.count else { throw failure("the value of \(attribute) does not end") }
                let value = try decodeText(bytes[start..<position])
                position += 1
                guard !element.attributes.contains(where: { $0.name == attribute }) else {
                    throw failure("\(attribute) twice in <\(name)>")
                }
                guard element.attributes.count < limits.maximumAttributes else {
                    throw failure("more than \(limits.maximumAttributes) attributes in <\(name)>")
                }
                element.attributes.append((attribute, value))
            }
        }

        /// Whitespace, comments, processing instructions (the XML declaration); a document type
        /// declaration is refused: it is where entity expansion attacks live, and MPDs have none.
        mutating func skipMisc() throws(ParseError) {
            while true {
                skipSpace()
                if starts("<!--") {
                    try skipComment()
                } else if starts("<?") {
                    try skipProcessingInstruction()
                } else if starts("<!DOCTYPE") || starts("<!doctype") {
                    throw failure("a document type declaration (refused: MPDs need none)")
                } else {
                    return
                }
            }
        }

        mutating func skipComment() throws(ParseError) {
            guard let end = find("-->", from: position + 4) else { throw failure("an unterminated comment") }
            position = end + 3
        }

        mutating func skipProcessingInstruction() throws(ParseError) {
            guard let end = find("?>", from: position + 2) else {
                throw failure("an unterminated processing instruction")
            }
            position = end + 2
        }

        /// An XML name: letters, digits and `_ : . -`, not starting with a digit, `.` or `-`;
        /// bytes of 0x80 and above are taken as name characters (non-ASCII names).
        mutating func readName() throws(ParseError) -> String {
            let start = position
            while position < bytes.count {
                let byte = bytes[position]
                let isStart =
                    (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F || byte == 0x3A
                    || byte >= 0x80
                let isName = isStart || (byte >= 0x30 && byte <= 0x39) || byte == 0x2E || byte == 0x2D
                if position == start ? !isStart : !isName { break }
                position += 1
            }
            guard position > start else { throw failure("a name was expected") }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        /// Character data with its references decoded.
        func decodeText(_ slice: ArraySlice<UInt8>) throws(ParseError) -> String {
            guard slice.contains(UInt8(ascii: "&")) else { return String(decoding: slice, as: UTF8.self) }
            var out: [UInt8] = []
            out.reserveCapacity(slice.count)
            var index = slice.startIndex
            while index < slice.endIndex {
                let byte = slice[index]
                guard byte == UInt8(ascii: "&") else {
                    out.append(byte)
                    index += 1
                    continue
                }
                guard let semicolon = slice[index...].firstIndex(of: UInt8(ascii: ";")), semicolon - index <= 12 else {
                    throw failure("an unterminated reference", at: index)
                }
                let name = String(decoding: slice[(index + 1)..<semicolon], as: UTF8.self)
                switch name {
                case "lt": out.append(UInt8(ascii: "<"))
                case "gt": out.append(UInt8(ascii: ">"))
                case "amp": out.append(UInt8(ascii: "&"))
                case "quot": out.append(UInt8(ascii: "\""))
                case "apos": out.append(UInt8(ascii: "'"))
                default:
                    let scalar: Unicode.Scalar?
                    if name.hasPrefix("#x") {
                        scalar = UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                    } else if name.hasPrefix("#") {
                        scalar = UInt32(name.dropFirst(1)).flatMap(Unicode.Scalar.init)
                    } else {
                        throw failure("the entity &\(name); (only the five of XML are known)", at: index)
                    }
                    guard let scalar, scalar.value != 0 else { throw failure("the reference &\(name);", at: index) }
                    out += Array(String(Character(scalar)).utf8)
                }
                index = semicolon + 1
            }
            return String(decoding: out, as: UTF8.self)
        }

        @discardableResult
        mutating func skipSpace() -> Bool {
            let start = position
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
            return position > start
        }

        func peek(_ byte: UInt8) -> Bool { position < bytes.count && bytes[position] == byte }

        func starts(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard position + count <= bytes.count else { return false }
            return text.withUTF8Buffer { buffer in
                for offset in 0..<count where bytes[position + offset] != buffer[offset] { return false }
                return true
            }
        }

        func find(_ text: StaticString, from start: Int? = nil) -> Int? {
            let needle = text.withUTF8Buffer { Array($0) }
            var index = start ?? position
            while index + needle.count <= bytes.count {
                if bytes[index] == needle[0] && bytes[index..<(index + needle.count)].elementsEqual(needle) {
                    return index
                }
                index += 1
            }
            return nil
        }

        mutating func expect(_ byte: UInt8) throws(ParseError) {
            guard peek(byte) else { throw failure("'\(Character(Unicode.Scalar(byte)))' was expected") }
            position += 1
        }

        func failure(_ reason: String, at offset: Int? = nil) -> ParseError {
            let offset = min(offset ?? position, bytes.count)
            let line = bytes[..<offset].reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
            return ParseError(reason: reason, offset: offset, line: line)
        }
    }
}
