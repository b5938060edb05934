// Registry<Info, Product, Args...>: components of one kind (allocators, queue policies, ...) by
// name, so that commands, policies and config files pick one by name and nothing else needs an
// if-chain over names. Every registry has the same verbs:
//
//   add(info)                 registers a component (Info has at least name, summary, factory)
//   all()                     every registered component, in registration order (`trellis list`)
//   find(name)                the component's Info, or nullptr
//   has(name)                 whether a component of that name is registered
//   names()                   the registered names, comma separated, for messages
//   create(name, args...)     builds the component: info.factory(args...); an unknown name is an
//                             Error::Code::kNotFound error naming the kind and the known names:
//                             "unknown allocator 'x' (known: contiguous, first-available, ...)"
//
// A kind's registry derives from its instance to add builtin() (every component Trellis ships)
// and any convenience overloads of create().
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace trellis {

template <typename Info, typename Product, typename... Args>
class Registry {
 public:
  using Factory = std::function<Result<std::unique_ptr<Product>>(Args...)>;

  // `kind` names the components in messages: "allocator", "queue policy".
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  void add(Info info) { infos_.push_back(std::move(info)); }
  const std::vector<Info>& all() const { return infos_; }
  const Info* find(std::string_view name) const {
    for (const Info& info : infos_)
      if (info.name == name) return &info;
    return nullptr;
  }
  bool has(std::string_view name) const { return find(name) != nullptr; }
  std::string names() const {
    std::string known;
    for (const Info& info : infos_) known += (known.empty() ? "" : ", ") + info.name;
    return known;
  }
  const std::string& kind() const { return kind_; }

  Result<std::unique_ptr<Product>> create(std::string_view name, Args... args) const {
    const Info* info = find(name);
    if (!info)
      return fail(Error::Code::kNotFound,
                  "unknown " + kind_ + " '" + std::string(name) + "' (known: " + names() + ")");
    return info->factory(std::forward<Args>(args)...);
  }

 private:
  std::string kind_;
  std::vector<Info> infos_;
};

}  // namespace trellis
