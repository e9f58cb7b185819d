import time, threading, json, re

def parse_records(n):
    out = []
    for i in range(n):
        s = json.dumps({"id": i, "name": "item%d" % i, "tags": ["a", "b", "c"]})
        out.append(json.loads(s))
    return out

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def tokenize(text):
    return re.findall(r"\w+", text)

def worker():
    t0 = time.time()
    while time.time() - t0 < 0.6:
        tokenize("the quick brown fox jumps over the lazy dog " * 200)

def main():
    th = threading.Thread(target=worker, name="Tokenizer")
    th.start()
    t0 = time.time()
    while time.time() - t0 < 0.6:
        parse_records(2000)
        fib(18)
    time.sleep(0.2)
    th.join()

if __name__ == "__main__":
    main()
