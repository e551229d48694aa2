// Streaming JSON reader (jsonreader.h) and its file source (plain or gzip through zlib).
#include "warpstage/jsonreader.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ws {

std::size_t StringSource::read(char* buffer, std::size_t size)
{
    const std::size_t n = std::min(size, m_s.size() - m_pos);
    std::memcpy(buffer, m_s.data() + m_pos, n);
    m_pos += n;
    return n;
}

namespace {

class FileSource : public ByteSource {
public:
    FileSource(std::FILE* f, std::string path) : m_f(f), m_path(std::move(path)) {}
    ~FileSource() override { std::fclose(m_f); }
    std::size_t read(char* buffer, std::size_t size) override
    {
        const std::size_t n = std::fread(buffer, 1, size, m_f);
        if (n == 0 && std::ferror(m_f))
            throw JsonError(m_path + ": read error (" + std::strerror(errno) + ")", 0);
        return n;
    }

protected:
    std::FILE* m_f;
    std::string m_path;
};

class GzipSource : public FileSource {
public:
    GzipSource(std::FILE* f, std::string path) : FileSource(f, std::move(path)), m_in(1 << 18)
    {
        // windowBits 15 + 32: zlib recognises the gzip header itself.
        if (inflateInit2(&m_z, 15 + 32) != Z_OK)
            throw JsonError(m_path + ": cannot start gzip decompression", 0);
    }
    ~GzipSource() override { inflateEnd(&m_z); }
    std::size_t read(char* buffer, std::size_t size) override
    {
        if (m_done)
            return 0;
        m_z.next_out = reinterpret_cast<Bytef*>(buffer);
        m_z.avail_out = uInt(size);
        while (m_z.avail_out == size) {
            if (m_z.avail_in == 0) {
                const std::size_t n = FileSource::read(m_in.data(), m_in.size());
                if (n == 0)
                    throw JsonError(m_path + ": the gzip stream is cut short (truncated file)", m_z.total_in);
                m_z.next_in = reinterpret_cast<Bytef*>(m_in.data());
                m_z.avail_in = uInt(n);
            }
            const int rc = inflate(&m_z, Z_NO_FLUSH);
            if (rc == Z_STREAM_END) {
                m_done = true;
                break;
            }
            if (rc != Z_OK && rc != Z_BUF_ERROR)
                throw JsonError(m_path + ": damaged gzip data (" + (m_z.msg ? m_z.msg : "inflate failed") + ")", m_z.total_in);
        }
        return size - m_z.avail_out;
    }

private:
    std::vector<char> m_in;
    z_stream m_z{};
    bool m_done = false;
};

}  // namespace

std::unique_ptr<ByteSource> openFileSource(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        throw JsonError(path + ": cannot open (" + std::strerror(errno) + ")", 0);
    const int a = std::fgetc(f), b = std::fgetc(f);
    std::rewind(f);
    if (a == 0x1f && b == 0x8b)
        return std::make_unique<GzipSource>(f, path);
    return std::make_unique<FileSource>(f, path);
}

JsonReader::JsonReader(ByteSource& source, std::size_t maxDepth, std::size_t maxString)
    : m_src(source), m_buf(1 << 16), m_maxDepth(maxDepth), m_maxString(maxString)
{
}

bool JsonReader::refill()
{
    if (m_eof)
        return false;
    m_len = m_src.read(m_buf.data(), m_buf.size());
    m_pos = 0;
    if (m_len == 0)
        m_eof = true;
    return m_len > 0;
}

int JsonReader::peek()
{
    if (m_pos == m_len && !refill())
        return -1;
    return static_cast<unsigned char>(m_buf[m_pos]);
}

int JsonReader::get()
{
    const int c = peek();
    if (c >= 0) {
        ++m_pos;
        ++m_offset;
    }
    return c;
}

void JsonReader::fail(const std::string& what) const
{
    throw JsonError(what + " at byte " + std::to_string(m_offset), m_offset);
}

void JsonReader::failAtEnd() const
{
    std::string where = "a value";
    if (!m_stack.empty())
        where = m_stack.back() == '{' ? "an object" : "an array";
    if (m_state == State::Start)
        throw JsonError("not JSON: the input is empty", m_offset);
    throw JsonError("truncated JSON: the input ends inside " + where + " (byte " + std::to_string(m_offset) + ")", m_offset);
}

void JsonReader::skipBlanks()
{
    for (;;) {
        const int c = peek();
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            get();
        else
            return;
    }
}

std::string_view JsonReader::tokenName(Token t)
{
    switch (t) {
    case Token::BeginObject: return "'{'";
    case Token::EndObject: return "'}'";
    case Token::BeginArray: return "'['";
    case Token::EndArray: return "']'";
    case Token::Key: return "a key";
    case Token::String: return "a string";
    case Token::Number: return "a number";
    case Token::True: return "true";
    case Token::False: return "false";
    case Token::Null: return "null";
    case Token::End: return "the end";
    }
    return "?";
}

JsonReader::Token JsonReader::next()
{
    for (;;) {
        skipBlanks();
        const int c = peek();
        switch (m_state) {
        case State::Start:
            if (c < 0)
                failAtEnd();
            return m_last = value();
        case State::Done:
            if (c < 0)
                return m_last = Token::End;
            fail("unexpected data after the JSON value");
        case State::ObjFirst:
            if (c == '}') {
                get();
                return m_last = closeContainer('{');
            }
            [[fallthrough]];
        case State::ObjKey:
            if (c < 0)
                failAtEnd();
            if (c != '"')
                fail("expected a string key");
            readString();
            m_state = State::Colon;
            return m_last = Token::Key;
        case State::Colon:
            if (c < 0)
                failAtEnd();
            if (c != ':')
                fail("expected ':' after a key");
            get();
            m_state = State::Value;
            continue;
        case State::ArrFirst:
            if (c == ']') {
                get();
                return m_last = closeContainer('[');
            }
            [[fallthrough]];
        case State::Value:
            if (c < 0)
                failAtEnd();
            return m_last = value();
        case State::AfterValue: {
            if (c < 0)
                failAtEnd();
            const char top = m_stack.back();
            if (c == ',') {
                get();
                m_state = top == '{' ? State::ObjKey : State::Value;
                continue;
            }
            if ((c == '}' && top == '{') || (c == ']' && top == '[')) {
                get();
                return m_last = closeContainer(top);
            }
            fail(top == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
        }
        }
    }
}

JsonReader::Token JsonReader::closeContainer(char c)
{
    m_stack.pop_back();
    m_state = m_stack.empty() ? State::Done : State::AfterValue;
    return c == '{' ? Token::EndObject : Token::EndArray;
}

JsonReader::Token JsonReader::value()
{
    const int c = peek();
    auto scalarDone = [&] { m_state = m_stack.empty() ? State::Done : State::AfterValue; };
    if (c == '{' || c == '[') {
        if (m_stack.size() >= m_maxDepth)
            fail("JSON nested deeper than " + std::to_string(m_maxDepth) + " levels");
        get();
        m_stack.push_back(char(c));
        m_state = c == '{' ? State::ObjFirst : State::ArrFirst;
        return c == '{' ? Token::BeginObject : Token::BeginArray;
    }
    if (c == '"') {
        readString();
        scalarDone();
        return Token::String;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        readNumber();
        scalarDone();
        return Token::Number;
    }
    Token t;
    if (c == 't') {
        literal("true");
        t = Token::True;
    } else if (c == 'f') {
        literal("false");
        t = Token::False;
    } else if (c == 'n') {
        literal("null");
        t = Token::Null;
    } else {
        fail(m_state == State::Start ? "not JSON: the input does not start with a JSON value" : "expected a value");
    }
    m_text.clear();
    scalarDone();
    return t;
}

void JsonReader::literal(std::string_view word)
{
    for (const char w : word) {
        const int c = get();
        if (c < 0)
            failAtEnd();
        if (c != w)
            fail(m_state == State::Start ? "not JSON: the input does not start with a JSON value"
                                         : "invalid literal (expected '" + std::string(word) + "')");
    }
}

void JsonReader::readNumber()
{
    m_text.clear();
    auto digits = [&] {
        std::size_t n = 0;
        for (int c = peek(); c >= '0' && c <= '9'; c = peek()) {
            m_text.push_back(char(get()));
            ++n;
        }
        return n;
    };
    if (peek() == '-')
        m_text.push_back(char(get()));
    if (peek() == '0') {
        m_text.push_back(char(get()));
    } else if (digits() == 0) {
        if (peek() < 0)
            failAtEnd();
        fail("invalid number");
    }
    if (peek() == '.') {
        m_text.push_back(char(get()));
        if (digits() == 0)
            peek() < 0 ? failAtEnd() : fail("invalid number (no digit after '.')");
    }
    if (peek() == 'e' || peek() == 'E') {
        m_text.push_back(char(get()));
        if (peek() == '+' || peek() == '-')
            m_text.push_back(char(get()));
        if (digits() == 0)
            peek() < 0 ? failAtEnd() : fail("invalid number (no digit in the exponent)");
    }
    if (m_text.size() > 400)
        fail("number literal too long");
}

void JsonReader::readString()
{
    get();  // the opening quote
    m_text.clear();
    auto hex4 = [&]() -> unsigned {
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
            const int c = get();
            if (c < 0)
                failAtEnd();
            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= unsigned(c - '0');
            else if (c >= 'a' && c <= 'f')
                v |= unsigned(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                v |= unsigned(c - 'A' + 10);
            else
                fail("invalid \\u escape");
        }
        return v;
    };
    auto utf8 = [&](unsigned cp) {
        if (cp < 0x80) {
            m_text.push_back(char(cp));
        } else if (cp < 0x800) {
            m_text.push_back(char(0xc0 | (cp >> 6)));
            m_text.push_back(char(0x80 | (cp & 0x3f)));
        } else if (cp < 0x10000) {
            m_text.push_back(char(0xe0 | (cp >> 12)));
            m_text.push_back(char(0x80 | ((cp >> 6) & 0x3f)));
            m_text.push_back(char(0x80 | (cp & 0x3f)));
        } else {
            m_text.push_back(char(0xf0 | (cp >> 18)));
            m_text.push_back(char(0x80 | ((cp >> 12) & 0x3f)));
            m_text.push_back(char(0x80 | ((cp >> 6) & 0x3f)));
            m_text.push_back(char(0x80 | (cp & 0x3f)));
        }
    };
    for (;;) {
        // Fast path: copy plain bytes of the buffer in one go.
        std::size_t i = m_pos;
        while (i < m_len && m_buf[i] != '"' && m_buf[i] != '\\' && static_cast<unsigned char>(m_buf[i]) >= 0x20)
            ++i;
        m_text.append(m_buf.data() + m_pos, i - m_pos);
        m_offset += i - m_pos;
        m_pos = i;
        if (m_text.size() > m_maxString)
            fail("string longer than " + std::to_string(m_maxString) + " bytes");
        const int c = get();
        if (c < 0)
            failAtEnd();
        if (c == '"')
            return;
        if (c < 0x20)
            fail("control character inside a string");
        if (c != '\\') {
            m_text.push_back(char(c));   // a plain byte the fast path left because the buffer ran out
            continue;
        }
        const int e = get();
        switch (e) {
        case '"': m_text.push_back('"'); break;
        case '\\': m_text.push_back('\\'); break;
        case '/': m_text.push_back('/'); break;
        case 'b': m_text.push_back('\b'); break;
        case 'f': m_text.push_back('\f'); break;
        case 'n': m_text.push_back('\n'); break;
        case 'r': m_text.push_back('\r'); break;
        case 't': m_text.push_back('\t'); break;
        case 'u': {
            unsigned cp = hex4();
            if (cp >= 0xd800 && cp < 0xdc00) {
                if (get() != '\\' || get() != 'u')
                    fail("unpaired surrogate in a \\u escape");
                const unsigned lo = hex4();
                if (lo < 0xdc00 || lo >= 0xe000)
                    fail("unpaired surrogate in a \\u escape");
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else if (cp >= 0xdc00 && cp < 0xe000) {
                fail("unpaired surrogate in a \\u escape");
            }
            utf8(cp);
            break;
        }
        case -1: failAtEnd();
        default: fail("invalid escape in a string");
        }
    }
}

void JsonReader::skipContainer()
{
    if (m_last != Token::BeginObject && m_last != Token::BeginArray)
        return;
    const std::size_t d = m_stack.size();
    while (m_stack.size() >= d)
        next();
}

JsonReader::Token JsonReader::skipValue()
{
    const Token t = next();
    if (t == Token::BeginObject || t == Token::BeginArray)
        skipContainer();
    return t;
}

}  // namespace ws
