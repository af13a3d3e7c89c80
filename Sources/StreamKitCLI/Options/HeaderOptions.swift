import Foundation
import StreamKitHTTP

/// `-H, --header 'Name: value'`, repeatable: extra request headers.
struct HeaderOptions: ParsableArguments {
    @Option(name: "header", short: "H", valueName: "header", help: "An extra request header, 'Name: value'.")
    var headers: [RequestHeader] = []

    init() {}

    /// The headers, in the order given.
    var httpHeaders: HTTPHeaders {
        var headers = HTTPHeaders()
        for header in self.headers { headers.add(header.name, header.value) }
        return headers
    }
}

/// One `Name: value` request header from the command line.
struct RequestHeader: Hashable, Sendable, ExpressibleByArgument {
    let name: String
    let value: String

    /// `Name: value`; `nil` when there is no colon, the name is not a token, or the value holds
    /// CR, LF or NUL.
    init?(argument: String) {
        guard let colon = argument.firstIndex(of: ":") else { return nil }
        let name = argument[..<colon]
        let value = argument[argument.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "\"" }),
            !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 })
        else { return nil }
        self.name = String(name)
        self.value = value
    }

    static func invalidValueMessage(_ argument: String, for name: String) -> String {
        "\(name) must be 'Name: value', got '\(argument)'"
    }
}
