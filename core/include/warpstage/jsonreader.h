// A streaming (pull) JSON reader: the caller asks for one token at a time, so a 2 GB trace is read
// with memory bounded by the longest string in it, never by the document. Qt-free, no dependency.
// Used by `warpstage import` (core/src/import_chrome.cpp) and meant for the Proton importer.
//
// Strict RFC 8259 grammar; every error is a JsonError with the byte offset and what was expected
// ("truncated JSON: the input ends inside an array (byte 1234)", "expected ',' or ']' at byte 17").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ws {

class JsonError : public std::runtime_error {
public:
    JsonError(const std::string& what, std::uint64_t offset) : std::runtime_error(what), m_offset(offset) {}
    std::uint64_t offset() const noexcept { return m_offset; }

private:
    std::uint64_t m_offset;
};

// Bytes in. read() returns 0 at the end; it may throw (JsonError or anything else) on I/O errors.
class ByteSource {
public:
    virtual ~ByteSource() = default;
    virtual std::size_t read(char* buffer, std::size_t size) = 0;
};

class StringSource : public ByteSource {
public:
    explicit StringSource(std::string_view s) : m_s(s) {}
    std::size_t read(char* buffer, std::size_t size) override;

private:
    std::string_view m_s;
    std::size_t m_pos = 0;
};

// A file, plain or gzip (recognised by its first two bytes, 1f 8b; decompressed with zlib as it is
// read). Throws JsonError when the file cannot be opened or the gzip stream is damaged or cut short.
std::unique_ptr<ByteSource> openFileSource(const std::string& path);

class JsonReader {
public:
    enum class Token { BeginObject, EndObject, BeginArray, EndArray, Key, String, Number, True, False, Null, End };

    explicit JsonReader(ByteSource& source, std::size_t maxDepth = 512, std::size_t maxString = 64u << 20);

    // The next token; End once the one top-level value and trailing blanks are read. Throws JsonError.
    Token next();
    // Key and String: the unescaped UTF-8 text; Number: the literal as written ("-1.250e3").
    const std::string& text() const { return m_text; }
    // Containers open around the current position (1 inside the top-level object or array).
    std::size_t depth() const { return m_stack.size(); }
    std::uint64_t offset() const { return m_offset; }
    // After BeginObject/BeginArray: reads up to and including the matching end. After any other token: nothing.
    void skipContainer();
    // Reads the value that follows a Key (or any value position): skips it if it is a container.
    Token skipValue();

    static std::string_view tokenName(Token t);

private:
    enum class State { Start, ObjFirst, ObjKey, Colon, ArrFirst, Value, AfterValue, Done };
    int peek();
    int get();
    bool refill();
    Token value();
    Token closeContainer(char c);
    void readString();
    void readNumber();
    void literal(std::string_view word);
    void skipBlanks();
    [[noreturn]] void fail(const std::string& what) const;
    [[noreturn]] void failAtEnd() const;

    ByteSource& m_src;
    std::vector<char> m_buf;
    std::size_t m_pos = 0, m_len = 0;
    bool m_eof = false;
    std::uint64_t m_offset = 0;   // of the next byte
    std::vector<char> m_stack;
    State m_state = State::Start;
    std::string m_text;
    Token m_last = Token::End;
    std::size_t m_maxDepth, m_maxString;
};

}  // namespace ws
