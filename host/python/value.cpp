#include "python/value.hpp"

namespace gilhost::py {

namespace {
Ref text(const Api& api, const std::string& s) {
  return Ref(api, api.PyUnicode_FromStringAndSize(s.data(), static_cast<std::ptrdiff_t>(s.size())));
}
}  // namespace

Ref to_python(const Api& api, const nlohmann::json& value) {
  using Type = nlohmann::json::value_t;
  switch (value.type()) {
    case Type::null: return Ref(api, api.Py_BuildValue(""));
    case Type::boolean: return Ref(api, api.PyBool_FromLong(value.get<bool>() ? 1 : 0));
    case Type::number_integer: return Ref(api, api.PyLong_FromLongLong(value.get<long long>()));
    case Type::number_unsigned: return Ref(api, api.PyLong_FromUnsignedLongLong(value.get<unsigned long long>()));
    case Type::number_float: return Ref(api, api.PyFloat_FromDouble(value.get<double>()));
    case Type::string: return text(api, value.get_ref<const std::string&>());
    case Type::array: {
      Ref list(api, api.PyList_New(0));
      for (const auto& item : value) {
        Ref element = to_python(api, item);
        if (!list || !element || api.PyList_Append(list.get(), element.get()) != 0) return Ref();
      }
      return list;
    }
    case Type::object: {
      Ref dict(api, api.PyDict_New());
      for (const auto& [key, item] : value.items()) {
        Ref k = text(api, key), v = to_python(api, item);
        if (!dict || !k || !v || api.PyDict_SetItem(dict.get(), k.get(), v.get()) != 0) return Ref();
      }
      return dict;
    }
    default: return Ref(api, api.Py_BuildValue(""));  // binary and discarded values: no spec holds them
  }
}

}  // namespace gilhost::py
