import Core

/// The app's own `HTTP` module, depending on its own `Core`.
public struct Route: Sendable {
    public let path: String
    public let greeting: Greeting

    public init(path: String, greeting: Greeting) {
        self.path = path
        self.greeting = greeting
    }
}
