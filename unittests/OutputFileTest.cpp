//===- OutputFileTest.cpp - output files and bounded input reads ----------===//
//
// paddle_output_* (runtime.h): a regular target is replaced whole or not at
// all; a device node or FIFO is written into, never replaced; a signal
// removes the temporary files. The readers of untrusted files read what
// their headers say, so an endless stream ends in an error, not in memory
// exhaustion. Every file here lives in a fresh temporary folder; device
// nodes are made there with mknod.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/runtime.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern =
        (fs::temp_directory_path() / "paddle-output-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string &name) const {
    return (path / name).string();
  }
  /// Every file in the folder (the temporary files left, if any).
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto &e : fs::directory_iterator(path))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeText(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string takeMessage(paddle_status_t s) {
  std::string m = s ? paddle_status_message(s) : "";
  paddle_status_free(s);
  return m;
}

/// $TMPDIR pointed at a folder of the test's for the life of this object.
struct ScopedTmpDir {
  std::string old;
  bool had;
  explicit ScopedTmpDir(const fs::path &dir) {
    const char *o = getenv("TMPDIR");
    had = o != nullptr;
    if (had)
      old = o;
    setenv("TMPDIR", dir.c_str(), 1);
  }
  ~ScopedTmpDir() {
    if (had)
      setenv("TMPDIR", old.c_str(), 1);
    else
      unsetenv("TMPDIR");
  }
};

TEST(OutputFile, ReplacesARegularFileWholeAndKeepsItsMode) {
  TempDir dir;
  std::string target = dir / "out.bin";
  writeText(target, "old contents");
  chmod(target.c_str(), 0640);
  paddle_output_t out = nullptr;
  ASSERT_EQ(paddle_output_create(target.c_str(), &out), nullptr);
  ASSERT_EQ(paddle_output_write(out, "new", 3), nullptr);
  // Until the commit the target is the old file.
  EXPECT_EQ(readFile(target), "old contents");
  ASSERT_EQ(paddle_output_commit(out), nullptr);
  EXPECT_EQ(readFile(target), "new");
  struct stat st;
  ASSERT_EQ(stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(dir.files(), std::vector<std::string>{"out.bin"});
}

TEST(OutputFile, DiscardLeavesTheOldFileAndNoTemporary) {
  TempDir dir;
  std::string target = dir / "out.bin";
  writeText(target, "old");
  paddle_output_t out = nullptr;
  ASSERT_EQ(paddle_output_create(target.c_str(), &out), nullptr);
  ASSERT_EQ(paddle_output_write(out, "partial", 7), nullptr);
  paddle_output_discard(out);
  EXPECT_EQ(readFile(target), "old");
  EXPECT_EQ(dir.files(), std::vector<std::string>{"out.bin"});
}

TEST(OutputFile, WritesIntoADeviceNodeWithoutReplacingIt) {
  TempDir dir;
  ScopedTmpDir tmp(dir.path);
  // The null device's numbers: a node like /dev/null, but ours.
  std::string node = dir / "null";
  ASSERT_EQ(mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0)
      << strerror(errno);
  ASSERT_EQ(paddle_write_file(node.c_str(), "bytes", 5), nullptr);
  struct stat st;
  ASSERT_EQ(lstat(node.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  // Its temporary file went to $TMPDIR and is gone.
  EXPECT_EQ(dir.files(), std::vector<std::string>{"null"});
}

TEST(OutputFile, WritesIntoAFifo) {
  TempDir dir;
  ScopedTmpDir tmp(dir.path);
  std::string fifo = dir / "pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0666), 0);
  std::string received;
  std::thread reader([&] { received = readFile(fifo); });
  paddle_status_t s = paddle_write_file(fifo.c_str(), "through", 7);
  reader.join();
  EXPECT_EQ(takeMessage(s), "");
  EXPECT_EQ(received, "through");
  struct stat st;
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(OutputFile, WritesThroughASymbolicLink) {
  TempDir dir;
  std::string real = dir / "real.txt", link = dir / "link.txt";
  writeText(real, "old");
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  ASSERT_EQ(paddle_write_file(link.c_str(), "new", 3), nullptr);
  struct stat st;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(readFile(real), "new");
}

TEST(OutputFile, ErrorsNameThePathAndTheReason) {
  TempDir dir;
  fs::create_directory(dir.path / "folder");
  writeText(dir / "file", "x");
  struct Case {
    std::string path, message;
  } cases[] = {
      {dir / "folder",
       "cannot write '" + (dir / "folder") + "': it is a directory"},
      {dir / "missing/out.npy", "cannot write '" + (dir / "missing/out.npy") +
                                    "': No such file or directory"},
      {dir / "file/out.npy",
       "cannot write '" + (dir / "file/out.npy") + "': Not a directory"},
      {dir / std::string(300, 'n'), "cannot write '" +
                                        (dir / std::string(300, 'n')) +
                                        "': File name too long"},
      {"", "no output file name given"},
  };
  for (const Case &c : cases) {
    EXPECT_EQ(takeMessage(paddle_write_file(c.path.c_str(), "x", 1)),
              c.message);
  }
  // A name as long as the file system allows still works: the temporary
  // file's name is kept shorter.
  std::string longest = dir / std::string(255, 'a');
  EXPECT_EQ(takeMessage(paddle_write_file(longest.c_str(), "x", 1)), "");
  EXPECT_EQ(readFile(longest), "x");
}

TEST(OutputFile, ASignalRemovesTheTemporaryFiles) {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    TempDir dir;
    std::string target = dir / "out.bin";
    writeText(target, "old");
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // Whatever this test was started with (a background job ignores
      // SIGINT): the default action, which ends the process. Only an
      // ignored one is reset: the others may have the handler already.
      struct sigaction current {};
      sigaction(sig, nullptr, &current);
      if (current.sa_handler == SIG_IGN)
        signal(sig, SIG_DFL);
      paddle_output_t a = nullptr, b = nullptr;
      if (paddle_output_create(target.c_str(), &a) ||
          paddle_output_create((dir / "second.bin").c_str(), &b))
        _exit(3);
      paddle_output_write(a, "partial", 7);
      raise(sig);
      _exit(4); // not reached: the signal's default action ends the process
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_EQ(readFile(target), "old");
    EXPECT_EQ(dir.files(), std::vector<std::string>{"out.bin"});
  }
}

TEST(OutputFile, AnIgnoredSignalStaysIgnored) {
  for (int sig : {SIGINT, SIGHUP}) {
    TempDir dir;
    std::string target = dir / "out.bin";
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      signal(sig, SIG_IGN);
      paddle_output_t out = nullptr;
      if (paddle_output_create(target.c_str(), &out))
        _exit(3);
      raise(sig);
      if (paddle_output_write(out, "new", 3) || paddle_output_commit(out))
        _exit(4);
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(readFile(target), "new");
    EXPECT_EQ(dir.files(), std::vector<std::string>{"out.bin"});
  }
}

TEST(OutputFile, ScratchFilesLiveInTmpdirUntilDiscarded) {
  TempDir dir;
  ScopedTmpDir tmp(dir.path);
  paddle_output_t out = nullptr;
  ASSERT_EQ(paddle_output_create_scratch(".c", &out), nullptr);
  std::string path = paddle_output_temp_path(out);
  EXPECT_EQ(fs::path(path).parent_path(), dir.path);
  EXPECT_EQ(fs::path(path).extension(), ".c");
  EXPECT_TRUE(fs::exists(path));
  paddle_output_discard(out);
  EXPECT_FALSE(fs::exists(path));
}

paddle_tensor_t floats(std::vector<float> &values) {
  paddle_tensor_t t{};
  t.dtype = PADDLE_F32;
  t.rank = 1;
  t.shape[0] = (int64_t)values.size();
  t.data = values.data();
  return t;
}

TEST(NpyWriteAll, AFailureLeavesTheOldSetUntouched) {
  TempDir dir;
  std::vector<float> a{1, 2}, b{3};
  paddle_tensor_t tensors[2] = {floats(a), floats(b)};
  std::string first = dir / "r_0.npy";
  writeText(first, "old result 0");
  // The second result cannot be written (its path is a folder).
  fs::create_directory(dir.path / "r_1.npy");
  std::string second = dir / "r_1.npy";
  const char *paths[2] = {first.c_str(), second.c_str()};
  std::string message = takeMessage(paddle_npy_write_all(paths, tensors, 2));
  EXPECT_NE(message.find("it is a directory"), std::string::npos) << message;
  EXPECT_EQ(readFile(first), "old result 0");
  EXPECT_EQ(dir.files(), (std::vector<std::string>{"r_0.npy", "r_1.npy"}));
  // With both writable, both are replaced.
  fs::remove(dir.path / "r_1.npy");
  ASSERT_EQ(takeMessage(paddle_npy_write_all(paths, tensors, 2)), "");
  paddle_tensor_t back{};
  ASSERT_EQ(paddle_npy_read(second.c_str(), &back), nullptr);
  EXPECT_EQ(back.shape[0], 1);
  EXPECT_EQ(((float *)back.data)[0], 3.0f);
  paddle_tensor_free(&back);
}

/// A FIFO that a thread fills with `head` and then zeros until the reader
/// closes it: an endless stream.
struct EndlessFifo {
  std::string path;
  std::thread writer;
  EndlessFifo(const TempDir &dir, std::string head) : path(dir / "endless") {
    signal(SIGPIPE, SIG_IGN);
    mkfifo(path.c_str(), 0666);
    writer = std::thread([this, head] {
      FILE *f = fopen(path.c_str(), "wb");
      if (!f)
        return;
      fwrite(head.data(), 1, head.size(), f);
      std::string zeros(1 << 16, '\0');
      while (fwrite(zeros.data(), 1, zeros.size(), f) == zeros.size()) {
      }
      fclose(f);
    });
  }
  ~EndlessFifo() { writer.join(); }
};

/// The prelude and header of a version 1.0 .npy file with header `dict`.
std::string npyHeader(const std::string &dict) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string npy = std::string("\x93NUMPY\x01\x00", 8);
  npy += (char)(header.size() & 0xff);
  npy += (char)(header.size() >> 8);
  return npy + header;
}

TEST(BoundedReads, NpyReadsOnlyWhatItsHeaderSays) {
  TempDir dir;
  std::string npy =
      npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }");
  paddle_tensor_t t{};
  {
    EndlessFifo fifo(dir, npy);
    ASSERT_EQ(takeMessage(paddle_npy_read(fifo.path.c_str(), &t)), "");
  }
  EXPECT_EQ(t.shape[0], 4);
  paddle_tensor_free(&t);
  {
    // Zeros from the start: not even a magic number.
    EndlessFifo fifo(dir, "");
    std::string m = takeMessage(paddle_npy_read(fifo.path.c_str(), &t));
    EXPECT_NE(m.find("missing the \\x93NUMPY magic"), std::string::npos) << m;
  }
}

TEST(BoundedReads, NpyHeaderClaimingMoreThanTheFileFailsBeforeAllocating) {
  TempDir dir;
  std::string npy = npyHeader("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (1000000000000,), }") +
                    "abcd";
  writeText(dir / "big.npy", npy);
  paddle_tensor_t t{};
  std::string m = takeMessage(paddle_npy_read((dir / "big.npy").c_str(), &t));
  EXPECT_NE(m.find("truncated .npy: 4 data bytes, shape needs more"),
            std::string::npos)
      << m;
}

TEST(BoundedReads, WeightsFromAnEndlessStreamStopAtTheLargestValidSize) {
  TempDir dir;
  EndlessFifo fifo(dir, "PDWEIGHT");
  char storage[16];
  paddle_weight_slot_t slot{storage, sizeof storage};
  std::string m =
      takeMessage(paddle_weights_load(fifo.path.c_str(), 1, &slot, 1));
  EXPECT_NE(m.find("is larger than"), std::string::npos) << m;
  EXPECT_NE(m.find("a stream that never ends?"), std::string::npos) << m;
}

TEST(BoundedReads, ALibraryMustBeARegularFile) {
  TempDir dir;
  EndlessFifo fifo(dir, "\x7f"
                        "ELF");
  paddle_executable_t exe = nullptr;
  // Opening the FIFO for reading lets the writer start; the loader then
  // refuses it without reading.
  std::string m = takeMessage(paddle_executable_load(fifo.path.c_str(), &exe));
  EXPECT_NE(m.find("not a regular file"), std::string::npos) << m;
}

} // namespace
