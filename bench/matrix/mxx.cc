// mxx.cc - the C++ workloads of the reference matrix (bench/matrix.rows).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char **argv)
{
    std::string w = argc > 1 ? argv[1] : "";
    if (w == "vector") {
        std::vector<unsigned> v;
        unsigned x = 7;
        for (int i = 0; i < 100000; i++)
            v.push_back(x = x * 1664525u + 1013904223u);
        std::sort(v.begin(), v.end());
        std::printf("min %u median %u max %u\n", v.front(), v[v.size() / 2], v.back());
    } else if (w == "map") {
        std::map<std::string, int> m;
        for (int i = 0; i < 1000; i++)
            m["k" + std::to_string(i % 97)] += i;
        std::printf("%zu keys, k5 %d, first %s\n", m.size(), m["k5"], m.begin()->first.c_str());
    } else if (w == "atomic") {
        std::atomic<long> n{0};
        std::vector<std::thread> t;
        for (int i = 0; i < 4; i++)
            t.emplace_back([&n] { for (int k = 0; k < 100000; k++) n++; });
        for (auto &th : t)
            th.join();
        std::printf("atomic %ld\n", n.load());
    } else if (w == "regex") {
        std::regex re("([a-z]+)@([a-z]+)\\.org");
        std::string s = "mail alice@example.org and bob@test.org today";
        for (std::sregex_iterator i(s.begin(), s.end(), re), e; i != e; ++i)
            std::printf("%s at %s\n", (*i)[1].str().c_str(), (*i)[2].str().c_str());
    } else if (w == "chrono") {
        auto a = std::chrono::steady_clock::now();
        volatile long s = 0;
        for (long i = 0; i < 1000000; i++)
            s += i;
        auto b = std::chrono::steady_clock::now();
        std::printf("diff_ns %lld\n", (long long)std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
    } else {
        std::fprintf(stderr, "mxx: unknown workload '%s'\n", w.c_str());
        return 2;
    }
    return 0;
}
